// Shared plumbing for the HTTP stand-ins (fake Clerk Backend API, fake Stripe).
import { randomBytes, randomFillSync } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo, Server, Socket } from 'node:net'

/**
 * How a stand-in answers its API routes. `hang` never answers (the socket
 * stays open until close()), `reset` drops the connection without a reply.
 */
export type FaultMode = 'ok' | 'error500' | 'hang' | 'reset'

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>

export interface Listening {
	server: http.Server
	port: number
	/** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
	url: string
	/** Stops listening and destroys every open socket, so hung requests never block a test run. */
	close(): Promise<void>
}

type Listener = {
	listen(port: number, host: string, callback: () => void): unknown
	once(event: 'error', callback: (error: Error) => void): unknown
}

/**
 * Listens on 127.0.0.1 (a free port) and tracks every open socket, so the stand-in's close() can cut
 * hung connections instead of waiting for them. `netServer` is where connections arrive, when the
 * listener wraps one (smtp-server's `.server`).
 */
/** Listens on a free port of 127.0.0.1, or of `address` (a test of what a server off this machine sees). */
export async function listenOnLoopback(listener: Listener, netServer: Server = listener as unknown as Server, address = '127.0.0.1') {
	const sockets = new Set<Socket>()
	netServer.on('connection', (socket: Socket) => {
		sockets.add(socket)
		socket.on('close', () => sockets.delete(socket))
	})
	await new Promise<void>((resolve, reject) => {
		listener.once('error', reject)
		listener.listen(0, address, () => resolve())
	})
	const { port } = netServer.address() as AddressInfo
	return { port, sockets }
}

export async function listen(handler: Handler): Promise<Listening> {
	const server = http.createServer((req, res) => {
		Promise.resolve(handler(req, res)).catch((error: unknown) => {
			// A bug in a stand-in must surface as a loud 500, not a hung request.
			if (!res.headersSent) {
				sendJson(res, 500, { error: { type: 'api_error', message: String(error) } })
			} else {
				res.destroy()
			}
		})
	})
	// Hung requests keep keep-alive sockets open: close() must be able to cut them.
	const { port, sockets } = await listenOnLoopback(server)
	let closing: Promise<void> | undefined
	return {
		server,
		port,
		url: `http://127.0.0.1:${port}`,
		close() {
			closing ??= new Promise<void>((resolve) => {
				server.close(() => resolve())
				for (const socket of sockets) socket.destroy()
				server.closeAllConnections()
			})
			return closing
		},
	}
}

export function readBody(req: http.IncomingMessage, limit = 1024 * 1024): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = []
		let size = 0
		req.on('data', (chunk: Buffer) => {
			size += chunk.length
			if (size > limit) {
				reject(new Error('request body too large for stand-in'))
				req.destroy()
				return
			}
			chunks.push(chunk)
		})
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
		req.on('error', reject)
	})
}

/**
 * `contentType` is exact on purpose: @clerk/backend only parses a body as JSON
 * when Content-Type is exactly `application/json` (no charset parameter).
 */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
	const text = JSON.stringify(body)
	res.writeHead(status, {
		'Content-Type': 'application/json',
		'Content-Length': Buffer.byteLength(text),
		...headers,
	})
	res.end(text)
}

export function sendHtml(res: http.ServerResponse, status: number, html: string): void {
	res.writeHead(status, {
		'Content-Type': 'text/html; charset=utf-8',
		'Content-Length': Buffer.byteLength(html),
	})
	res.end(html)
}

export function escapeHtml(value: unknown): string {
	return String(value)
		.replaceAll('&', '&amp;')
		.replaceAll('<', '&lt;')
		.replaceAll('>', '&gt;')
		.replaceAll('"', '&quot;')
		.replaceAll("'", '&#39;')
}

// Ids are drawn from a buffer refilled 4 KiB at a time: a fake Stripe call makes several (request id,
// object ids), and one getrandom call per id was the fake's largest cost under `npm run bench`.
const entropy = Buffer.alloc(4096)
let entropyUsed = entropy.length

function randomBytesPooled(length: number): Buffer {
	if (length > entropy.length) return randomBytes(length)
	if (entropyUsed + length > entropy.length) {
		randomFillSync(entropy)
		entropyUsed = 0
	}
	entropyUsed += length
	return entropy.subarray(entropyUsed - length, entropyUsed)
}

/** Random letters and digits, for ids that look like the real services' ids. */
export function randomId(length = 24): string {
	const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'
	const bytes = randomBytesPooled(length)
	let out = ''
	for (const byte of bytes) out += alphabet[byte % alphabet.length]
	return out
}

export function nowSeconds(): number {
	return Math.floor(Date.now() / 1000)
}
