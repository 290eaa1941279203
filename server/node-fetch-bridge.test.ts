import http from 'node:http'
import net from 'node:net'
import { afterEach, expect, test } from 'vitest'
import { within } from '#tests/support/deadline.ts'
import { ClientGoneError, hostProblem, readDeclaredBody, toFetchRequest } from './node-fetch-bridge.js'

let server: http.Server | undefined
afterEach(async () => {
	server?.closeAllConnections()
	await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
	server = undefined
})

/** A server that waits `delayMs` (as the app server may, loading its build) before reading the body. */
async function readingAfter(delayMs: number) {
	let settle: (value: unknown) => void = () => {}
	const outcome = new Promise<unknown>((resolve) => (settle = resolve))
	server = http.createServer((req) => {
		setTimeout(() => void readDeclaredBody(req).then(settle, settle), delayMs)
	})
	await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
	const { port } = server.address() as { port: number }
	return { port, outcome }
}

/** Sends half of a declared 100-byte body, then closes the connection. */
function leaveHalfway(port: number) {
	const socket = net.connect(port, '127.0.0.1', () => {
		socket.write('POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":')
		setTimeout(() => socket.destroy(), 30)
	})
}

test.each([0, 150])('a client leaving mid-body is ClientGoneError, also when it left before reading began (%i ms)', async (delayMs) => {
	const { port, outcome } = await readingAfter(delayMs)
	leaveHalfway(port)
	expect(await within(outcome, 5_000, 'the body read to settle')).toBeInstanceOf(ClientGoneError)
})

test('a whole body sent in pieces is one buffer', async () => {
	const { port, outcome } = await readingAfter(0)
	const socket = net.connect(port, '127.0.0.1', () => {
		socket.write('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello')
		setTimeout(() => socket.write(' world'), 30)
	})
	try {
		const body = await within(outcome, 5_000, 'the body')
		expect(Buffer.isBuffer(body) && body.toString()).toBe('hello world')
	} finally {
		socket.destroy()
	}
})

/** The Request a server hands the routes for a request with these raw headers. */
async function requestWith(rawHeaders: string[]) {
	let built: Request | undefined
	let problem: string | null = null
	// One server per request; afterEach closes the last.
	await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
	server = http.createServer((req, res) => {
		problem = hostProblem(req)
		if (!problem) built = toFetchRequest(req, undefined)
		res.end()
	})
	await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
	const { port } = server.address() as { port: number }
	await new Promise<void>((resolve, reject) => {
		const request = http.request({ host: '127.0.0.1', port, path: '/pricing', headers: rawHeaders })
		request.on('response', (response) => (response.resume(), response.on('end', resolve)))
		request.on('error', reject)
		request.end()
	})
	return { built, problem }
}

test('forwarded-origin headers a URL can hold reach the routes as sent; others are dropped', async () => {
	const kept = await requestWith([
		'Host',
		'x',
		'X-Forwarded-Host',
		'callsheet.example',
		'X-Forwarded-Proto',
		'https',
		'X-Forwarded-Port',
		'443',
	])
	expect(kept.built?.headers.get('x-forwarded-host')).toBe('callsheet.example')
	expect(kept.built?.headers.get('x-forwarded-proto')).toBe('https')
	expect(kept.built?.headers.get('x-forwarded-port')).toBe('443')
	const dropped = await requestWith(['Host', 'x', 'X-Forwarded-Host', 'a b', 'X-Forwarded-Proto', 'https ,http', 'X-Forwarded-Port', 'x'])
	expect(dropped.built?.headers.get('x-forwarded-host')).toBeNull()
	expect(dropped.built?.headers.get('x-forwarded-proto')).toBeNull()
	expect(dropped.built?.headers.get('x-forwarded-port')).toBeNull()
	expect(dropped.built?.headers.get('host')).toBe('x')
})

test('two Host headers are a problem; one is not', async () => {
	expect((await requestWith(['Host', 'one.example', 'Host', 'two.example'])).problem).toBe('more than one Host header')
	expect((await requestWith(['Host', 'one.example'])).problem).toBeNull()
})
