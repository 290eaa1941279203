import crypto from 'node:crypto'

// A signed-out page is the same for every visitor for much longer than this; the limit is there so
// that whatever a render does read (the build, the configuration) shows within seconds of changing.
const TTL_MS = 10_000
// Keys include what visitors choose (the page, its `interval`, Host, Accept): bounded, oldest out.
const MAX_ENTRIES = 100

/**
 * @typedef {{
 *   status: number,
 *   statusText: string,
 *   headers: Array<[string, string]>,
 *   parts: string[],
 *   fixedBytes: number,
 *   expiresAt: number,
 * }} PageSnapshot
 */

/**
 * Renders of public pages for visitors who carry no identity, kept for a few seconds
 * (docs/decisions/0016-signed-out-page-cache.md). A visitor with no cookie and no Authorization
 * header is signed out to Clerk and to every loader, so the page they get depends only on the build,
 * the configuration and the request line. The pages named by the app (`isCacheablePage`) promise
 * that their signed-out render reads nothing else.
 *
 * The document's nonce is the one thing that must differ per response (the CSP allows only the
 * scripts that carry it). A render meant for the cache is made with a placeholder that exists only
 * in this process, and every response, the first included, gets its own nonce in its place.
 *
 * @param {{
 *   isCacheablePage: (pathname: string, search: string) => boolean,
 *   wantsWholeDocument: (userAgent: string | undefined) => boolean,
 *   now?: () => number,
 * }} options
 */
export function createPageCache({ isCacheablePage, wantsWholeDocument, now = Date.now }) {
	// Hex: no escaping (HTML, JSON, URL) changes it, so every copy in the page is found.
	const placeholder = crypto.randomBytes(16).toString('hex')
	/** @type {Map<string, PageSnapshot>} */
	const entries = new Map()

	/**
	 * The cache key for a request this cache may answer, or undefined. For a request without cookies,
	 * Clerk chooses between the page and a handshake redirect from the URL and from whether the request
	 * is a document navigation (Sec-Fetch-Dest, Accept): both headers are in the key as sent, with the
	 * Host, and whether the page is rendered whole (a crawler) or streamed (a browser).
	 *
	 * @param {import('node:http').IncomingMessage} req
	 * @param {string} pathname
	 * @param {string} search the query after `?`, or ''
	 */
	function keyFor(req, pathname, search) {
		if (req.method !== 'GET' || !isCacheablePage(pathname, search)) return undefined
		const headers = req.headers
		if (headers.cookie !== undefined || headers.authorization !== undefined) return undefined
		const reader = wantsWholeDocument(headers['user-agent']) ? 'whole' : 'streamed'
		return `${headers.host}\n${req.url}\n${headers['sec-fetch-dest'] ?? ''}\n${headers.accept ?? ''}\n${reader}`
	}

	/** @param {string} key */
	function get(key) {
		const entry = entries.get(key)
		if (entry && entry.expiresAt <= now()) {
			entries.delete(key)
			return undefined
		}
		return entry
	}

	/**
	 * Reads a response rendered with `placeholder` as its nonce. A complete HTML page (200, no cookie
	 * set) is kept under `key`; anything else (a redirect, an error page) is answered once and dropped.
	 *
	 * @param {string} key
	 * @param {Response} response
	 * @returns {Promise<PageSnapshot>}
	 */
	async function capture(key, response) {
		const cookies = response.headers.getSetCookie()
		/** @type {Array<[string, string]>} */
		const headers = []
		response.headers.forEach((value, name) => {
			if (name !== 'set-cookie') headers.push([name, value])
		})
		// Set-Cookie is for one visitor: a response that sets one is sent to them and not kept.
		for (const cookie of cookies) headers.push(['set-cookie', cookie])
		const html = await response.text()
		const parts = html.split(placeholder)
		const snapshot = {
			status: response.status,
			statusText: response.statusText,
			headers,
			parts,
			fixedBytes: Buffer.byteLength(html) - (parts.length - 1) * placeholder.length,
			expiresAt: now() + TTL_MS,
		}
		const keep = response.status === 200 && cookies.length === 0 && (response.headers.get('content-type') ?? '').startsWith('text/html')
		if (keep) {
			entries.delete(key)
			entries.set(key, snapshot)
			if (entries.size > MAX_ENTRIES) entries.delete(/** @type {string} */ (entries.keys().next().value))
		}
		return snapshot
	}

	/**
	 * @param {import('node:http').ServerResponse} res
	 * @param {PageSnapshot} snapshot
	 * @param {Iterable<[string, string]>} extraHeaders the server's headers for this response (its CSP names `nonce`)
	 * @param {string} nonce
	 */
	function send(res, snapshot, extraHeaders, nonce) {
		/** @type {import('node:http').OutgoingHttpHeaders} */
		const headers = {}
		for (const [name, value] of extraHeaders) headers[name] = value
		/** @type {string[]} */
		const cookies = []
		for (const [name, value] of snapshot.headers) {
			if (name === 'set-cookie') cookies.push(value)
			else headers[name] = value
		}
		if (cookies.length > 0) headers['set-cookie'] = cookies
		headers['content-length'] = snapshot.fixedBytes + (snapshot.parts.length - 1) * Buffer.byteLength(nonce)
		res.writeHead(snapshot.status, snapshot.statusText || undefined, headers)
		res.end(snapshot.parts.length === 1 ? snapshot.parts[0] : snapshot.parts.join(nonce))
	}

	return { placeholder, keyFor, get, capture, send }
}
