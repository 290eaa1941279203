import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { onCleanup } from './processes.ts'

export type LoadRequest = {
	method: 'GET' | 'POST'
	path: string
	headers: Record<string, string>
	body?: string
	/** Cookie headers to rotate through, one per request. */
	cookies?: string[]
	/** Index of the first cookie to use (continue a warm-up's rotation). */
	startAt?: number
}

export type LoadResult = {
	duration: number
	requests: { average: number; total: number }
	latency: { p50: number; p90: number; p99: number; max: number; average: number }
	throughputBytesPerSec: number
	counts: Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx', number>
	non2xx: number
	errors: number
	timeouts: number
	resets: number
	statusCodeStats: Record<string, { count: number }>
	samples: Record<string, string[]>
	nextCookie: number
	/** autocannon's encoded latency histogram of the run (dropped from the results file). */
	latencyHistogram?: string
}

/**
 * Drives `baseUrl` with autocannon in a worker thread for `seconds` at `connections`. `onStarted` is
 * called as the first requests leave, after the worker and autocannon have loaded.
 */
export function runLoad(
	baseUrl: string,
	request: LoadRequest,
	{ seconds, connections, onStarted }: { seconds: number; connections: number; onStarted?: () => void },
) {
	const worker = new Worker(new URL('./load-worker.mjs', import.meta.url), {
		workerData: {
			url: baseUrl,
			connections,
			duration: seconds,
			method: request.method,
			path: request.path,
			headers: request.headers,
			body: request.body,
			cookies: request.cookies,
			startAt: request.startAt,
			timeoutSeconds: 10,
		},
	})
	const stop = onCleanup('load generator', () => worker.terminate())
	return new Promise<LoadResult>((resolve, reject) => {
		let settled = false
		const finish = (error: Error | null, result?: LoadResult) => {
			if (settled) return
			settled = true
			clearTimeout(timer)
			void stop()
			if (error) reject(error)
			else resolve(result!)
		}
		// autocannon stops by itself after `seconds`; this only catches a wedged worker.
		const timer = setTimeout(() => finish(new Error(`load generator did not finish within ${seconds + 60} s`)), (seconds + 60) * 1000)
		worker.on('message', (message: { started: true } | { result: LoadResult }) => {
			if ('started' in message) onStarted?.()
			else finish(null, message.result)
		})
		worker.once('error', (error) => finish(error))
		worker.once('exit', (code) => finish(new Error(`load generator exited with ${code} before reporting`)))
	})
}

type Histogram = { add: (other: Histogram) => void; destroy: () => void; totalCount: number }
type HistogramTools = {
	decodeHist: (encoded: string) => Histogram
	histAsObj: (histogram: Histogram) => Record<string, number>
	addPercentiles: (histogram: Histogram, summary: Record<string, number>) => Record<string, number>
}

/**
 * One result for runs of the same request against the same server measured in slices (the paired
 * anchor runs, decision 0027): counts and durations added up, and the latency percentiles read from
 * the slices' latency histograms merged, as autocannon merges its own workers' histograms.
 */
export function mergeLoads(loads: LoadResult[]): LoadResult {
	if (loads.length === 1) return withoutHistogram(loads[0]!)
	const histograms = createRequire(import.meta.url)('autocannon/lib/histUtil.js') as HistogramTools
	const decoded = loads.map((load) => {
		if (!load.latencyHistogram) throw new Error('mergeLoads: a slice without its latency histogram (load-worker.mjs sends one)')
		return histograms.decodeHist(load.latencyHistogram)
	})
	const [merged] = decoded as [Histogram, ...Histogram[]]
	for (const histogram of decoded.slice(1)) merged.add(histogram)
	const percentiles = histograms.addPercentiles(merged, histograms.histAsObj(merged))
	const duration = sum(loads.map((load) => load.duration))
	const total = sum(loads.map((load) => load.requests.total))
	const statusCodeStats: LoadResult['statusCodeStats'] = {}
	const samples: LoadResult['samples'] = {}
	for (const load of loads) {
		for (const [status, { count }] of Object.entries(load.statusCodeStats)) {
			statusCodeStats[status] = { count: (statusCodeStats[status]?.count ?? 0) + count }
		}
		for (const [status, bodies] of Object.entries(load.samples)) samples[status] = [...(samples[status] ?? []), ...bodies].slice(0, 3)
	}
	const counts = Object.fromEntries(
		(['1xx', '2xx', '3xx', '4xx', '5xx'] as const).map((kind) => [kind, sum(loads.map((load) => load.counts[kind]))]),
	) as LoadResult['counts']
	for (const histogram of decoded) histogram.destroy()
	return {
		duration,
		requests: { average: total / (duration || 1), total },
		latency: {
			p50: percentiles.p50!,
			p90: percentiles.p90!,
			p99: percentiles.p99!,
			max: percentiles.max!,
			average: percentiles.average!,
		},
		throughputBytesPerSec: sum(loads.map((load) => load.throughputBytesPerSec * load.duration)) / (duration || 1),
		counts,
		non2xx: sum(loads.map((load) => load.non2xx)),
		errors: sum(loads.map((load) => load.errors)),
		timeouts: sum(loads.map((load) => load.timeouts)),
		resets: sum(loads.map((load) => load.resets)),
		statusCodeStats,
		samples,
		nextCookie: loads.at(-1)!.nextCookie,
	}
}

/** The result as kept in the results file: the encoded histogram is for merging only. */
function withoutHistogram(load: LoadResult): LoadResult {
	const { latencyHistogram: _histogram, ...kept } = load
	return kept
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
