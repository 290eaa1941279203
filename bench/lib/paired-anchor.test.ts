import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { mergeLoads, type LoadResult } from './load.ts'
import { anchorFor, cpuPerRequestUs, type EndpointResult, type SetResult } from './report.ts'

// The benchmark measures ours beside remix-serve in slices (decision 0027): these are the two pieces
// that turn slices into the figures the targets are judged on.

// autocannon's own histogram helpers (the module mergeLoads reads the slices with).
type HistUtil = {
	getHistograms: () => { latencies: { recordValue: (value: number) => void; destroy: () => void } }
	encodeHist: (histogram: unknown) => string
}
const histUtil = createRequire(import.meta.url)('autocannon/lib/histUtil.js') as HistUtil

/** A slice of `seconds` whose 2xx responses took the given latencies (ms), as load-worker.mjs reports one. */
function slice(seconds: number, latencies: number[], extra: Partial<LoadResult> = {}): LoadResult {
	const histogram = histUtil.getHistograms().latencies
	for (const value of latencies) histogram.recordValue(value)
	const encoded = histUtil.encodeHist(histogram)
	histogram.destroy()
	const sorted = [...latencies].sort((a, b) => a - b)
	return {
		duration: seconds,
		requests: { average: latencies.length / seconds, total: latencies.length },
		latency: { p50: sorted[Math.floor(sorted.length / 2)]!, p90: 0, p99: sorted.at(-1)!, max: sorted.at(-1)!, average: 0 },
		throughputBytesPerSec: 1000,
		counts: { '1xx': 0, '2xx': latencies.length, '3xx': 0, '4xx': 0, '5xx': 0 },
		non2xx: 0,
		errors: 0,
		timeouts: 0,
		resets: 0,
		statusCodeStats: { '200': { count: latencies.length } },
		samples: {},
		nextCookie: 7,
		latencyHistogram: encoded,
		...extra,
	}
}

describe('mergeLoads', () => {
	it('adds up counts and durations and reads the percentiles from the merged histograms', () => {
		// 100 fast answers in one slice, 100 slow ones in the other: the merged p50 sits between them,
		// and the merged p99 is the slow slice's, which neither slice's own p50 shows.
		const fast = slice(
			5,
			Array.from({ length: 100 }, () => 2),
		)
		const slow = slice(
			5,
			Array.from({ length: 100 }, () => 40),
			{
				statusCodeStats: { '200': { count: 90 }, '500': { count: 10 } },
				samples: { '500': ['{"code":"server-error"}'] },
				errors: 1,
				nextCookie: 3,
			},
		)
		const merged = mergeLoads([fast, slow])
		expect(merged.duration).toBe(10)
		expect(merged.requests.total).toBe(200)
		expect(merged.statusCodeStats).toEqual({ '200': { count: 190 }, '500': { count: 10 } })
		expect(merged.samples).toEqual({ '500': ['{"code":"server-error"}'] })
		expect(merged.errors).toBe(1)
		expect(merged.latency.p50).toBe(2)
		expect(merged.latency.p99).toBe(40)
		expect(merged.latency.max).toBe(40)
		// The rotation of users goes on from the last slice.
		expect(merged.nextCookie).toBe(3)
		// Nothing encoded is kept in the results file.
		expect(merged).not.toHaveProperty('latencyHistogram')
	})

	it('keeps a single slice as it is, without its histogram', () => {
		const only = slice(10, [1, 2, 3])
		const { latencyHistogram: _encoded, ...expected } = only
		expect(mergeLoads([only])).toEqual(expected)
	})
})

describe('anchorFor', () => {
	const result = (endpoint: EndpointResult['endpoint'], okRps: number) => ({ endpoint, okRps }) as EndpointResult
	const set = (
		id: string,
		server: SetResult['server'],
		endpoint: EndpointResult['endpoint'],
		okRps: number,
		beside?: string[],
	): SetResult => ({
		id,
		label: id,
		server,
		database: server === 'node:http' ? 'none' : 'postgres',
		anchor: server !== 'ours',
		...(beside ? { beside } : {}),
		endpoints: [result(endpoint, okRps)],
		peakRssMb: 0,
		rssAfterMb: null,
		hwmMb: null,
	})

	it('compares each round with the anchors measured beside it', () => {
		const sets = [
			set('bare-1', 'node:http', 'health', 50_000),
			set('remix-serve-1', 'remix-serve', 'contact', 1000),
			set('ours-1', 'ours', 'contact', 3100, ['remix-serve-1', 'bare-1']),
			set('bare-2', 'node:http', 'health', 40_000),
			set('remix-serve-2', 'remix-serve', 'contact', 800, ['bare-2', 'ours-2']),
			set('ours-2', 'ours', 'contact', 2500, ['remix-serve-2', 'bare-2']),
		]
		expect(anchorFor(sets, sets[2]!, 'contact')?.okRps).toBe(1000)
		expect(anchorFor(sets, sets[5]!, 'contact')?.okRps).toBe(800)
		expect(anchorFor(sets, sets[2]!, 'health', 'node:http')?.okRps).toBe(50_000)
		expect(anchorFor(sets, sets[5]!, 'health', 'node:http')?.okRps).toBe(40_000)
		// The anchors' own rows too: round 2's remix-serve against round 2's bare server.
		expect(anchorFor(sets, sets[4]!, 'health', 'node:http')?.okRps).toBe(40_000)
	})

	it('compares a set measured beside no anchor (the embedded one, runs before 0027) with the first one', () => {
		const sets = [
			set('remix-serve-1', 'remix-serve', 'contact', 1000),
			set('remix-serve-2', 'remix-serve', 'contact', 800, ['bare-2', 'ours-2']),
			set('ours-embedded', 'ours', 'contact', 3000),
		]
		expect(anchorFor(sets, sets[2]!, 'contact')?.okRps).toBe(1000)
		expect(anchorFor([set('ours-1', 'ours', 'contact', 3000)], {}, 'contact')).toBeUndefined()
	})
})

describe('cpuPerRequestUs', () => {
	it('is the server process CPU time per response, in µs', () => {
		expect(cpuPerRequestUs({ cpu: { serverPct: 90, benchPct: 0, machinePct: 0 }, rps: 3000 })).toBeCloseTo(300)
		expect(cpuPerRequestUs({ cpu: { serverPct: null, benchPct: 0, machinePct: 0 }, rps: 3000 })).toBeNull()
		expect(cpuPerRequestUs({ cpu: { serverPct: 90, benchPct: 0, machinePct: 0 }, rps: 0 })).toBeNull()
	})
})
