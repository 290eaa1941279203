import { Readable } from 'node:stream'

// Converts between node:http and the Fetch API objects Remix speaks. Small on purpose: Remix's own
// adapters do more than we need, per request (docs/decisions/0004-own-http-server.md).

/** A request node:http accepted but a Fetch Request cannot hold: the client's fault, answered 400. */
export class MalformedRequestError extends Error {}

export function toFetchRequest(req, signal) {
	const headers = new Headers()
	const raw = req.rawHeaders
	for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1])
	const host = req.headers.host ?? 'localhost'
	let url
	try {
		url = new URL(req.url ?? '/', `http://${host}`)
	} catch {
		// node:http lets through a Host no URL can hold (`Host: a b`).
		throw new MalformedRequestError('the Host header cannot form a URL')
	}
	const init = { method: req.method, headers, signal }
	if (req.method !== 'GET' && req.method !== 'HEAD') {
		init.body = Readable.toWeb(req)
		init.duplex = 'half'
	}
	return new Request(url, init)
}

export async function sendFetchResponse(res, response, extraHeaders) {
	const headers = {}
	for (const [name, value] of extraHeaders) headers[name] = value
	response.headers.forEach((value, name) => {
		if (name !== 'set-cookie') headers[name] = value
	})
	const cookies = response.headers.getSetCookie()
	if (cookies.length > 0) headers['set-cookie'] = cookies
	if (!response.body || res.req.method === 'HEAD') {
		res.writeHead(response.status, response.statusText || undefined, headers)
		res.end()
		return
	}
	// JSON answers are small: send them whole, with a length, in one write. Pages stream.
	if (headers['content-type']?.startsWith('application/json')) {
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
