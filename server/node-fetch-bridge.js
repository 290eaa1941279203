import { Readable } from 'node:stream'

// Converts between node:http and the Fetch API objects Remix speaks. Small on purpose: Remix's own
// adapters do more than we need, per request (docs/decisions/0004-own-http-server.md).

/** A request node:http accepted but a Fetch Request cannot hold: the client's fault, answered 400. */
export class MalformedRequestError extends Error {}

/**
 * The whole body of a request that declared its length, as one Buffer. Rejects when the client goes
 * away first (node:http's request timeout bounds a client that never finishes).
 *
 * @param {import('node:http').IncomingMessage} req
 * @returns {Promise<Buffer>}
 */
export function readDeclaredBody(req) {
	return new Promise((resolve, reject) => {
		// Gone before we started reading (an await before this call): no event will come any more.
		if (req.destroyed) return reject(new ClientGoneError('the client closed the connection before sending its whole body'))
		const chunks = []
		const onData = (chunk) => chunks.push(chunk)
		const onEnd = () => {
			cleanup()
			resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))
		}
		const onGone = () => {
			cleanup()
			reject(new ClientGoneError('the client closed the connection before sending its whole body'))
		}
		const cleanup = () => {
			req.off('data', onData)
			req.off('end', onEnd)
			req.off('error', onGone)
			req.off('close', onGone)
		}
		req.on('data', onData)
		req.on('end', onEnd)
		req.on('error', onGone)
		req.on('close', onGone)
	})
}

/** The client left while its request was still arriving: nobody to answer, nothing of ours failed. */
export class ClientGoneError extends Error {}

/**
 * The build's body classes (app/utils/ready-bodies.server.ts): a body already in memory crosses
 * between the server and the routes without a web stream.
 *
 * @typedef {{
 *   ReadyBodyRequest: new (input: string, init: Omit<RequestInit, 'body'>, bytes: Uint8Array<ArrayBuffer>) => Request,
 *   ReadyTextResponse: abstract new (...args: any[]) => Response & { takeText(): string },
 * }} ReadyBodies
 */

/** A name or address and a port: nothing that could end the origin and start a path, query or fragment. */
const PLAIN_HOST = /^[A-Za-z0-9.:[\]_-]+$/

/**
 * RFC 9112 §3.2: a request without Host in HTTP/1.1, or with more than one, is answered 400. Two,
 * joined, would also be one value no URL can hold, which the identity provider's SDK throws on.
 *
 * @param {import('node:http').IncomingMessage} req
 */
export function hostProblem(req) {
	if (req.headers.host === undefined) return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 ? 'no Host header' : null
	const raw = req.rawHeaders
	let hosts = 0
	for (let i = 0; i < raw.length; i += 2) {
		const name = /** @type {string} */ (raw[i])
		if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1) return 'more than one Host header'
	}
	return null
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {AbortSignal | undefined} signal
 * @param {{ bytes: Buffer, classes: ReadyBodies }} [readBody] the body when already read
 *   (readDeclaredBody); otherwise it streams from `req`
 */
export function toFetchRequest(req, signal, readBody) {
	const host = req.headers.host ?? 'localhost'
	const target = req.url ?? '/'
	/** @type {RequestInit & { duplex?: 'half' }} */
	const init = { method: req.method, signal }
	if (!readBody && req.method !== 'GET' && req.method !== 'HEAD') {
		init.body = /** @type {ReadableStream} */ (/** @type {unknown} */ (Readable.toWeb(req)))
		init.duplex = 'half'
	}
	let request
	try {
		// The Request parses its URL itself, so it is given a string: parsing a URL here first would parse
		// it twice. A target that starts with `/` has been through normalizeTarget (no `//`, no `\`), so
		// appending it to a Host of plain host characters is what resolving it against that origin gives
		// (a Host holding `/`, `?` or `#` would move the path: resolved, it cannot).
		const url = target.startsWith('/') && PLAIN_HOST.test(host) ? `http://${host}${target}` : new URL(target, `http://${host}`).href
		// A Buffer is a Uint8Array; TypeScript's DOM types want one backed by an ArrayBuffer, as node's are.
		request = readBody
			? new readBody.classes.ReadyBodyRequest(url, init, /** @type {Uint8Array<ArrayBuffer>} */ (readBody.bytes))
			: new Request(url, init)
	} catch (error) {
		// node:http lets through a Host no URL can hold (`Host: a b`); the method and body are ours.
		if (error instanceof TypeError) throw new MalformedRequestError('the Host header cannot form a URL')
		throw error
	}
	// Into the Request's own headers: headers passed in its init are copied into them, a second pass.
	const headers = request.headers
	const raw = req.rawHeaders
	for (let i = 0; i < raw.length; i += 2) headers.append(/** @type {string} */ (raw[i]), /** @type {string} */ (raw[i + 1]))
	dropUnreadableForwarding(req, headers)
	return request
}

// Headers the identity provider's SDK builds the request's public URL from (behind a proxy: the
// browser's https origin). Any client can send them; one no URL can hold (`X-Forwarded-Host: a b`)
// made the SDK throw, so every page answered 500 with a logged stack and a valid API session read as
// signed out. A malformed one says nothing of the origin and is dropped; a well-formed one is kept.
const FORWARDING = /** @type {const} */ (['x-forwarded-host', 'x-forwarded-proto', 'cloudfront-forwarded-proto', 'x-forwarded-port'])
const PROTOCOL = /^https?$/i
const PORT = /^\d{1,5}$/

/** The first of a comma-separated list, exactly as the SDK reads it (untrimmed: `https ,http` is `https `). */
const firstOf = (value) => value.split(',')[0]

function readableForwarding(name, value) {
	const first = firstOf(value)
	if (name === 'x-forwarded-host') return PLAIN_HOST.test(first) && URL.canParse(`http://${first}`)
	if (name === 'x-forwarded-port') return PORT.test(first)
	return PROTOCOL.test(first)
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {Headers} headers
 */
function dropUnreadableForwarding(req, headers) {
	const parsed = req.headers
	for (const name of FORWARDING) {
		const value = parsed[name]
		if (value !== undefined && !readableForwarding(name, headers.get(name) ?? '')) headers.delete(name)
	}
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {Response} response
 * @param {Iterable<[string, string]>} extraHeaders
 * @param {ReadyBodies} classes a ReadyTextResponse's text is sent without a stream
 */
export async function sendFetchResponse(res, response, extraHeaders, classes) {
	/** @type {import('node:http').OutgoingHttpHeaders} */
	const headers = {}
	for (const [name, value] of extraHeaders) headers[name] = value
	response.headers.forEach((value, name) => {
		if (name !== 'set-cookie') headers[name] = value
	})
	const cookies = response.headers.getSetCookie()
	if (cookies.length > 0) headers['set-cookie'] = cookies
	// JSON answers are small: send them whole, with a length, in one write. Pages stream.
	if (response instanceof classes.ReadyTextResponse && res.req.method !== 'HEAD') {
		const body = Buffer.from(response.takeText())
		headers['content-length'] = body.length
		res.writeHead(response.status, response.statusText || undefined, headers)
		res.end(body)
		return
	}
	if (res.req.method === 'HEAD' || !response.body) {
		res.writeHead(response.status, response.statusText || undefined, headers)
		res.end()
		return
	}
	if (String(headers['content-type']).startsWith('application/json')) {
		const body = Buffer.from(await response.arrayBuffer())
		headers['content-length'] = body.length
		res.writeHead(response.status, response.statusText || undefined, headers)
		res.end(body)
		return
	}
	res.writeHead(response.status, response.statusText || undefined, headers)
	await writeStream(response.body, res)
}

function drainedOrClosed(res) {
	return /** @type {Promise<void>} */ (
		new Promise((resolve) => {
			const settle = () => {
				res.off('drain', settle)
				res.off('close', settle)
				resolve()
			}
			res.on('drain', settle)
			res.on('close', settle)
		})
	)
}

// Pages stream: chunks go to the socket as React produces them, waiting on the socket when it is
// full. A plain reader loop: wrapping the web stream in a node Readable and piping it measured
// slower per page than this.
async function writeStream(body, res) {
	const reader = body.getReader()
	const stopReading = () => reader.cancel().catch(() => {})
	res.once('close', stopReading)
	try {
		for (;;) {
			const { done, value } = await reader.read()
			if (done) break
			if (!res.write(value)) {
				if (res.destroyed) break
				await drainedOrClosed(res)
				if (res.destroyed) break
			}
		}
		res.end()
	} catch (error) {
		res.destroy(error)
	} finally {
		res.off('close', stopReading)
		reader.releaseLock()
	}
}
