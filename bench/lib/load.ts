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
}

/** Drives `baseUrl` with autocannon in a worker thread for `seconds` at `connections`. */
export function runLoad(baseUrl: string, request: LoadRequest, { seconds, connections }: { seconds: number; connections: number }) {
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
		worker.once('message', (result: LoadResult) => finish(null, result))
		worker.once('error', (error) => finish(error))
		worker.once('exit', (code) => finish(new Error(`load generator exited with ${code} before reporting`)))
	})
}
