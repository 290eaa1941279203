import http from 'node:http'
import net from 'node:net'
import { afterEach, expect, test } from 'vitest'
import { within } from '#tests/support/deadline.ts'
import { ClientGoneError, readDeclaredBody } from './node-fetch-bridge.js'

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
