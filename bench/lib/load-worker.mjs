// One autocannon run in a worker thread, so the load generator has its own event loop and does not
// compete with the stand-ins (fake Clerk, fake Stripe, SMTP sink) that live in the main thread.
// Plain JavaScript: worker threads are not transformed by vite-node.
import { parentPort, workerData } from 'node:worker_threads'
import autocannon from 'autocannon'

const { url, connections, duration, method, path, headers, body, cookies, startAt, timeoutSeconds } = workerData

/** First few bodies of each non-2xx status, for the report. */
const samples = {}
let next = startAt ?? 0

const request = {
	method,
	path,
	headers,
	...(body === undefined ? {} : { body }),
	onResponse(status, responseBody) {
		if (status >= 200 && status < 300) return
		const list = (samples[status] ??= [])
		if (list.length < 3) list.push(String(responseBody ?? '').slice(0, 400))
	},
}
if (cookies && cookies.length > 0) {
	// Rotates signed-in users across every connection: request n carries cookie n mod length.
	request.setupRequest = (req) => {
		req.headers = { ...req.headers, Cookie: cookies[next++ % cookies.length] }
		return req
	}
}

const options = { url, connections, duration, timeout: timeoutSeconds, requests: [request] }
// Said before the first request: starting this thread and loading autocannon take a few hundred
// milliseconds in which the server is idle, which must not count in its CPU share.
parentPort.postMessage({ started: true })
// Off the main thread autocannon hands back raw histograms: aggregate them as its main thread would.
const raw = await autocannon(options)
const result = autocannon.aggregateResult([raw], options)

parentPort.postMessage({
	result: {
		duration: result.duration,
		requests: { average: result.requests.average, total: result.requests.total },
		latency: {
			p50: result.latency.p50,
			p90: result.latency.p90,
			p99: result.latency.p99,
			max: result.latency.max,
			average: result.latency.average,
		},
		throughputBytesPerSec: result.throughput.average,
		counts: { '1xx': result['1xx'], '2xx': result['2xx'], '3xx': result['3xx'], '4xx': result['4xx'], '5xx': result['5xx'] },
		non2xx: result.non2xx,
		errors: result.errors,
		timeouts: result.timeouts,
		resets: result.resets,
		statusCodeStats: result.statusCodeStats,
		samples,
		/** The run's latency histogram as autocannon encodes it: runs in slices are merged from these. */
		latencyHistogram: raw.latencies,
		/** Where the next run should continue the rotation, so a warm-up and its run use different users. */
		nextCookie: cookies ? next % cookies.length : 0,
	},
})
