import crypto from 'node:crypto'
import http from 'node:http'
import { createRequestHandler } from '@remix-run/node'
import { createApiDispatch } from './api-dispatch.js'
import { createPageCache } from './page-cache.js'
import {
	ClientGoneError,
	hostProblem,
	MalformedRequestError,
	readDeclaredBody,
	sendFetchResponse,
	toFetchRequest,
} from './node-fetch-bridge.js'
import { createRequestLog } from './request-log.js'
import { normalizeTarget, resolvedPath, routedPath, withoutRemixInstructions } from './request-target.js'

// Methods that reach the API's routes (as a Fetch Request, through our dispatch or Remix): each
// route says which it takes (405 with Allow for the others).
const FETCH_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
// The methods pages take (Remix would run a page's action for PUT, PATCH or DELETE as for POST).
const PAGE_METHODS = new Set(['GET', 'HEAD', 'POST'])
// How long a CONNECT's socket may stay open once node:http has handed it over (see 'connect').
const HANDED_OVER_SOCKET_MS = 5_000
// Pages answer GET and HEAD, and POST to their forms.
const PAGE_METHOD_NOT_ALLOWED = 'This method is not allowed here.'
const PAGE_METHOD_NOT_ALLOWED_HEADERS = {
	Allow: 'GET, HEAD, POST',
	'Content-Type': 'text/plain; charset=utf-8',
	'Content-Length': String(Buffer.byteLength(PAGE_METHOD_NOT_ALLOWED)),
	'Cache-Control': 'no-store',
}

/**
 * A request answered before its body was read (413 on its declared length, a refusal) may still be
 * uploading: the Fetch body wrapper holds the socket paused, so the client's upload and the connection
 * stall until a timeout (a browser keeps "loading" the answer it already shows). Once the answer is out,
 * discard the rest as node:http does for a body nobody touched; its 30 s request timeout bounds that.
 */
function discardUnreadBody(req) {
	req.removeAllListeners('data')
	req.resume()
}

/**
 * A page or its data rendered for a request with cookies or credentials may show that user's account
 * (their email, their plan, their pending deletion request): no shared cache (a proxy, a CDN) may keep
 * it, and the browser asks again before reusing its copy from its HTTP cache. Not no-store, which
 * would also keep the page out of the browser's back/forward cache (Chromium here): Back from Stripe's
 * hosted pages is designed around that cache (app/utils/client-navigation.ts). The cost, measured:
 * without JavaScript, Back after signing out shows the account page restored from that cache (with
 * JavaScript, the restore reloads it into the sign-in page). Lower-case, so a route's own
 * Cache-Control replaces it. A request without either gets the page anyone gets (decision 0016).
 */
const PRIVATE_PAGE = /** @type {[string, string]} */ (['cache-control', 'private, no-cache'])
const carriesCredentials = (req) => req.headers.cookie !== undefined || req.headers.authorization !== undefined

const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i
// An escaped line break (CR, LF, U+2028, U+2029) in a path: Remix's splat route does not match one
// (its pattern's `.` stops there), so an /api/* path holding one would fall to the HTML 404 page.
const ESCAPED_LINE_BREAK = /%0[ad]|%e2%80%a[89]/i

const malformedBody = (message) => JSON.stringify({ error: message, code: 'bad-body', detail: message, issues: [] })

/**
 * A JSON route's body, read whole before its Request is built, when the client declared a length
 * within the API's body limit. The route then gets it in a ReadyBodyRequest, without the web streams
 * a Request over node's stream needs (docs/decisions/0015-bodies-without-streams.md).
 * Anything else (no length, chunked, over the limit) streams as before, and readJsonBody still
 * enforces the limit on every body: this only chooses where the bytes wait.
 *
 * @param {import('node:http').IncomingMessage} req
 * @param {number} limit
 */
function smallDeclaredBody(req, limit) {
	const declared = req.headers['content-length']
	if (declared === undefined || req.method === 'GET' || req.method === 'HEAD') return undefined
	const length = Number(declared)
	return Number.isInteger(length) && length <= limit ? readDeclaredBody(req) : undefined
}

let healthHeaders
let healthAnswer = { body: '', headers: {} }
function sendHealth(res, entry) {
	healthHeaders ??= { ...Object.fromEntries(entry.securityHeaders('health')), ...entry.HEALTH_HEADERS }
	// The payload changes every 10 s: its headers are built once per payload, not per request.
	const body = entry.healthBody()
	if (body !== healthAnswer.body) healthAnswer = { body, headers: { ...healthHeaders, 'content-length': Buffer.byteLength(body) } }
	res.writeHead(200, healthAnswer.headers)
	res.end(res.req.method === 'HEAD' ? undefined : body)
}

/**
 * Runs `then` once every response already queued on `socket` has been written, unless the socket is
 * gone by then. node:http gives the socket to the next queued response in its 'finish' listeners, so
 * each earlier response is waited for in turn and the socket looked at again after those have run.
 *
 * @param {import('node:net').Socket | import('node:stream').Duplex} socket
 * @param {() => void} then
 */
function afterEarlierResponses(socket, then) {
	const held = /** @type {{ _httpMessage?: import('node:http').ServerResponse | null }} */ (socket)
	const next = () => {
		if (socket.destroyed) return
		const earlier = held._httpMessage
		if (earlier) return void earlier.once('finish', () => setImmediate(next))
		then()
	}
	next()
}

/**
 * The HTTP server shared by `npm start` and `npm run dev`: security headers on every response, a
 * request log line (health excepted), fixed-path /api/* routes dispatched directly, Remix for
 * everything else, and a graceful stop.
 *
 * @param {{
 *   getBuild: () => any,
 *   mode: 'production' | 'development',
 *   serveStatic?: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, headers: Array<[string, string]>) => boolean,
 *   viteMiddleware?: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => Promise<boolean>,
 * }} options
 */
export function createAppServer({ getBuild, serveStatic, mode, viteMiddleware }) {
	let inFlight = 0
	let closing = false
	let remix
	let apiRoute
	let apiHeaders
	/** @type {import('./node-fetch-bridge.js').ReadyBodies} */
	let readyBodies
	let remixBuild
	/** @type {ReturnType<typeof createPageCache> | undefined} */
	let pageCache
	const log = createRequestLog()

	/** Takes `build` (a new one in development after an edit) for the requests from now on. */
	function adopt(build) {
		remixBuild = build
		remix = createRequestHandler(build, mode)
		apiRoute = createApiDispatch(build)
		// JSON answers render no HTML, so they need no per-request script nonce.
		apiHeaders = build.entry.module.securityHeaders('api')
		readyBodies = { ReadyBodyRequest: build.entry.module.ReadyBodyRequest, ReadyTextResponse: build.entry.module.ReadyTextResponse }
		// Development renders every request: the page a developer edits must show at once.
		const { isCacheablePage, wantsWholeDocument } = build.entry.module
		pageCache = mode === 'production' ? createPageCache({ isCacheablePage, wantsWholeDocument }) : undefined
	}
	// Production has its build before it listens: taken now, so that even an answer written before the
	// first request reaches the routes (a malformed first request) has the security headers.
	// (Development loads its build on the first request, which reports a failure to load it.)
	const initialBuild = getBuild()
	if (initialBuild instanceof Promise) initialBuild.catch(() => {})
	else adopt(initialBuild)

	// The liveness probe is answered from memory, before any routing or bookkeeping: it must stay cheap
	// and up even when everything behind it is slow. Same payload as the api.health route. (Until the
	// first request has loaded the build, it takes the ordinary path below.)
	const onRequest = (req, res) => {
		if (remixBuild && req.url === '/api/health' && (req.method === 'GET' || req.method === 'HEAD')) {
			sendHealth(res, remixBuild.entry.module)
			return
		}
		void handle(req, res)
	}
	// While stopping, every answer says the connection ends with it: those taken in after the stop, and
	// those already on their way at it, whose head is written later. Sent keep-alive, the client's next
	// request on that connection was taken in, then cut unanswered at the grace's end (a contact message
	// sent, then sent again). Here rather than by keeping each response in a Set for the stop to visit:
	// that cost 10-20 % of the API's throughput (docs/performance.md). Not keeping the connection alive
	// makes node write `Connection: close` and end it after the answer; the headers passed are left as given.
	class AppResponse extends http.ServerResponse {
		/**
		 * @override
		 * @param {any[]} args what http.ServerResponse's writeHead takes
		 */
		writeHead(...args) {
			if (closing) this.shouldKeepAlive = false
			return super.writeHead(.../** @type {[number, any, any]} */ (args))
		}
	}
	// A missing Host is answered here, in JSON like every other malformed request (node:http's own 400
	// has no body). An HTTP/1.0 request may omit it.
	const server = http.createServer({ requireHostHeader: false, ServerResponse: AppResponse }, onRequest)
	// An Expect other than 100-continue: node:http answers 417 with no body by default, health included.
	// RFC 9110 §10.1.1 lets a server ignore an expectation it does not know: the request is answered.
	server.on('checkExpectation', onRequest)

	async function handle(req, res) {
		const started = process.hrtime.bigint()
		const url = normalizeTarget(req.url ?? '/')
		// The Request is built from req.url: it must be the target routed here.
		req.url = url
		const query = url.indexOf('?')
		const pathname = query === -1 ? url : url.slice(0, query)
		inFlight++
		let controller
		res.on('close', () => {
			inFlight--
			if (controller && !res.writableFinished) controller.abort()
			if (pathname !== '/api/health') {
				const ms = Number(process.hrtime.bigint() - started) / 1e6
				// Closed before any answer was sent: the client left. Logged as nginx logs it, 499.
				const status = res.headersSent ? res.statusCode : 499
				log.line(`${req.method} ${pathname} ${status} ${ms.toFixed(1)}ms`)
			}
		})
		try {
			const build = await getBuild()
			if (build !== remixBuild) adopt(build)
			const entry = build.entry.module
			if (pathname === '/api/health' && (req.method === 'GET' || req.method === 'HEAD')) {
				sendHealth(res, entry)
				return
			}
			// After the health probe, which answers whatever the Host says (a probe is not refused), and
			// before the page cache, which answers without building a Request.
			const badHost = hostProblem(req)
			if (badHost) throw new MalformedRequestError(badHost)
			// Remix matches the resolved, decoded path: `/%61pi/nope` and `/x/../api/nope` reach the API's
			// routes, so they are API paths too.
			const isApi =
				entry.isApiPath(pathname) ||
				((pathname.includes('%') || DOT_SEGMENT.test(pathname)) && entry.isApiPath(routedPath(resolvedPath(pathname))))
			// A Fetch Request cannot carry TRACE or CONNECT, and Remix refuses methods it does not know with a
			// body of its own: the API answers those itself, as the contract asks (405 with Allow, or 404).
			if (isApi && !FETCH_METHODS.has(req.method)) {
				await sendFetchResponse(res, entry.unknownApiMethodResponse(apiRoute.allowFor(pathname)), apiHeaders, readyBodies)
				return
			}
			// Nor can a page take them (Remix would throw building the Request: a 500 and a logged error), nor
			// any method but GET, HEAD and POST (a PUT would run the page's action: the contact form sent mail).
			if (!isApi && !PAGE_METHODS.has(req.method)) {
				for (const [name, value] of apiHeaders) res.setHeader(name, value)
				res.writeHead(405, PAGE_METHOD_NOT_ALLOWED_HEADERS)
				res.end(PAGE_METHOD_NOT_ALLOWED)
				return
			}
			// The URL parser resolves dot segments (`/api/..`, `/api/%2e%2e/pricing`) into a page's path, and
			// an escaped line break keeps the API's splat route from matching: Remix would answer either with
			// HTML. An /api/* request gets the API's JSON 404 instead.
			if (isApi && (DOT_SEGMENT.test(pathname) || (pathname.includes('%') && ESCAPED_LINE_BREAK.test(pathname)))) {
				await sendFetchResponse(res, entry.unknownApiMethodResponse(undefined), apiHeaders, readyBodies)
				return
			}
			const direct = isApi ? apiRoute(req.method, pathname) : undefined
			if (isApi && !direct) req.url = withoutRemixInstructions(url)
			const nonce = direct ? 'api' : crypto.randomBytes(16).toString('base64')
			const headers = direct ? apiHeaders : entry.securityHeaders(nonce)
			if (!direct && viteMiddleware && (await viteMiddleware(req, res))) return
			if (!direct && serveStatic?.(req, res, headers)) return
			const cache = direct ? undefined : pageCache
			const cacheKey = cache?.keyFor(req, pathname, query === -1 ? '' : url.slice(query + 1))
			const cached = cacheKey === undefined ? undefined : cache?.get(cacheKey)
			if (cached) {
				cache?.send(res, cached, headers, nonce)
				return
			}

			// Pages stop work when the client goes away: Remix checks request.signal around its loaders (and
			// React stops when the response stream closes). The JSON routes never read the signal, and each
			// AbortSignal a Request follows costs measurable time per call.
			controller = direct ? undefined : new AbortController()
			const bytes = direct ? await smallDeclaredBody(req, entry.MAX_BODY_BYTES) : undefined
			const request = toFetchRequest(req, controller?.signal, bytes && { bytes, classes: readyBodies })
			// A render that may be kept carries the cache's placeholder, replaced by `nonce` as it is sent.
			const context = { cspNonce: cache && cacheKey !== undefined ? cache.placeholder : nonce, remoteAddress: req.socket.remoteAddress }
			const response = entry.crossSiteFormRefusal(request) ?? (await (direct ? direct(request, context) : remix(request, context)))
			if (!(response instanceof Response)) throw new Error(`${pathname} answered something other than a Response`)
			if (!req.complete) res.once('finish', () => discardUnreadBody(req))
			if (cache && cacheKey !== undefined) {
				let snapshot
				try {
					snapshot = await cache.capture(cacheKey, response)
				} catch (error) {
					// The visitor left while the page was being read whole: nobody to answer, nothing kept.
					if (controller?.signal.aborted) return void res.destroy()
					throw error
				}
				cache.send(res, snapshot, headers, nonce)
				return
			}
			await sendFetchResponse(res, response, carriesCredentials(req) && !direct ? [...headers, PRIVATE_PAGE] : headers, readyBodies)
		} catch (error) {
			answerFailure(res, error, pathname)
		}
	}

	/**
	 * The security headers of the answers written here rather than by a route (a malformed request, a
	 * failure no route answered): the API's, as every route's JSON answer has them. In development,
	 * none until the first request has loaded the build.
	 *
	 * @returns {Array<[string, string]>}
	 */
	const ownAnswerHeaders = () => apiHeaders ?? []

	/** A request that failed outside its route's own answer: a JSON 400 or 500 for /api/*, no stack. */
	function answerFailure(res, error, pathname) {
		if (res.headersSent || error instanceof ClientGoneError) {
			res.destroy()
			return
		}
		for (const [name, value] of ownAnswerHeaders()) res.setHeader(name, value)
		if (error instanceof MalformedRequestError) {
			// As node:http answers the requests it rejects itself (clientError below): no stack, no retry.
			const body = malformedBody('The request is malformed.')
			res.writeHead(400, {
				'content-type': 'application/json; charset=utf-8',
				'content-length': Buffer.byteLength(body),
				'cache-control': 'no-store',
				connection: 'close',
			})
			res.end(body)
			return
		}
		console.error('server: request failed:', error)
		const routed = routedPath(resolvedPath(pathname))
		const isApi = remixBuild ? remixBuild.entry.module.isApiPath(routed) : routed.startsWith('/api/')
		res.writeHead(500, {
			'content-type': isApi ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8',
			'cache-control': 'no-store',
		})
		res.end(
			isApi
				? JSON.stringify({ error: 'Something went wrong on our side. It is safe to try again.', code: 'server-error' })
				: 'Something went wrong on our side. Please try again.',
		)
	}

	// Requests node:http rejects before any handler runs (malformed, header block over 16 KiB) still get
	// a JSON answer, as every /api/* client expects.
	server.on('clientError', (/** @type {NodeJS.ErrnoException} */ error, socket) => {
		if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy()
		const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
		const body = malformedBody(tooLarge ? 'The request headers are too large.' : 'The request is malformed.')
		const badRequest =
			// 400 for both: the contract gives bad-body one status (a 431 would be a second meaning of the code).
			'HTTP/1.1 400 Bad Request\r\n' +
			`Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\n` +
			ownAnswerHeaders()
				.map(([name, value]) => `${name}: ${value}\r\n`)
				.join('') +
			`Connection: close\r\n\r\n${body}`
		const held =
			/** @type {{ _httpMessage?: import('node:http').ServerResponse | null, parser?: { incoming?: import('node:http').IncomingMessage | null } | null }} */ (
				socket
			)
		// The bad bytes follow whole requests (stray bytes after them, a malformed next request) whose
		// answers are still to go out: those answers first, in order, then the 400. Written at once, the
		// 400 would reach the client before, or inside, the answer to a request it sent correctly.
		const current = held.parser?.incoming
		if (held._httpMessage && (!current || current.complete)) {
			return afterEarlierResponses(socket, () => {
				// An answer that closed the connection (Connection: close, HTTP/1.0) leaves nothing to answer on;
				// node:http ends the socket once that answer is written.
				if (socket.writable) socket.end(badRequest)
			})
		}
		// The bad bytes are in the request being answered (its body): a 400 now, unless its answer has begun.
		if (held._httpMessage?.headersSent) return socket.destroy()
		socket.end(badRequest)
	})
	// node:http hands a CONNECT request to 'connect' listeners with the bare socket, and without one
	// closes the socket unanswered. This is not a proxy: CONNECT gets the answer any other method the
	// target does not take gets (JSON 405 with Allow on /api/*), on a response bound to that socket.
	// node:http no longer looks after this socket, so this does: errors and a client that never closes
	// end it (none of the server's timeouts watch it), and whatever else the client sends is discarded
	// (closing with unread bytes would reset the connection and could lose the answer).
	server.on('connect', (req, duplex) => {
		// node:http types it as a Duplex; for a TCP server it is the connection's net.Socket.
		const socket = /** @type {import('node:net').Socket} */ (duplex)
		socket.on('error', () => socket.destroy())
		const deadline = setTimeout(() => socket.destroy(), HANDED_OVER_SOCKET_MS).unref()
		socket.once('close', () => clearTimeout(deadline))
		socket.resume()
		// Requests pipelined before the CONNECT may still be answering on this socket, one after another.
		// node:http took its own 'drain' listener away with the socket: without it, a response larger
		// than the socket's buffer would wait for a 'drain' that never reaches it.
		const held = /** @type {{ _httpMessage?: import('node:http').ServerResponse | null }} */ (socket)
		const forwardDrain = () => held._httpMessage?.emit('drain')
		socket.on('drain', forwardDrain)
		afterEarlierResponses(socket, () => {
			socket.off('drain', forwardDrain)
			// An earlier response that ended the connection (Connection: close) leaves nothing to answer on.
			if (!socket.writable) return void socket.destroy()
			const res = new http.ServerResponse(req)
			res.shouldKeepAlive = false
			res.assignSocket(socket)
			// Not detached: the response's 'close' (the request's log line, the in-flight count) comes
			// from this socket closing.
			res.on('finish', () => socket.end())
			void handle(req, res)
		})
	})
	// Responses go out in several writes (head, body chunks, end). With Nagle's algorithm on, the
	// client's delayed ACK holds the later segments ~40 ms: measured as a 40 ms floor on p50.
	server.on('connection', (socket) => socket.setNoDelay(true))
	server.keepAliveTimeout = 65_000
	server.headersTimeout = 66_000
	server.requestTimeout = 30_000

	/** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the rest. */
	async function shutdown(graceMs = 10_000) {
		closing = true
		log.flush()
		const closed = new Promise((resolve) => server.close(resolve))
		server.closeIdleConnections()
		const deadline = Date.now() + graceMs
		while (inFlight > 0 && Date.now() < deadline) {
			await new Promise((r) => setTimeout(r, 25))
			// A connection whose answer had gone out before the stop (a stream) is closed once it is idle.
			server.closeIdleConnections()
		}
		// Cut off: their clients see a closed connection and the request log a 499 ("the client left"),
		// so the reason is said once here.
		if (inFlight > 0) console.error(`stopping: ${inFlight} request(s) still running after ${graceMs / 1000} s were cut off`)
		server.closeAllConnections()
		await closed
		log.flush()
	}

	return { server, shutdown }
}
