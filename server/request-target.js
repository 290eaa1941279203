// The request target as the server routes it. Routing reads the raw string (a URL parse per request
// costs measurable time on the API), so the raw string must mean what the URL parser, and Remix after
// it, will make of it:
// - An absolute-form target (`GET http://host/api/contact HTTP/1.1`, which RFC 9112 §3.2.2 has every
//   server accept) is reduced to its path and query: read raw, it is no /api/* path at all.
// - In the path, `\` is `/` (WHATWG URL does the same for http), and runs of `/` are one (as nginx's
//   merge_slashes): parsed against a base, `//api/health` names a host `api`, and `/\evil.example/`
//   a host `evil.example`, so the page answering and the path routed would otherwise differ.
// - A path segment whose %-escapes do not decode (`/%`, `/pricing%zz`, a cut UTF-8 sequence) is read
//   as literal text: its `%` become `%25`. Remix's router otherwise warns on the console for every such
//   request, one line each that a scanner could send by the thousand; the answer (a 404) is the same.
// The query is left as sent.

/** `scheme://authority`: what an absolute-form target has before its path. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i
const UNUSUAL_PATH = /\\|\/\/|%/

/**
 * @param {string} target `req.url` as node:http gives it
 * @returns {string} the target to route and to build the Request from; the same string when already
 *   in normal form (every ordinary request)
 */
export function normalizeTarget(target) {
	let normal = target
	if (!normal.startsWith('/')) {
		// `*` (OPTIONS *) and anything else that is not a URL are left to the router, which 404s them.
		const authority = ABSOLUTE_FORM.exec(normal)
		if (!authority) return target
		// The path as written, not as a URL parser resolves it: `/api/../pricing` keeps its dot segments,
		// so the server's guard against them still sees them.
		const rest = normal.slice(authority[0].length)
		normal = rest.startsWith('/') ? rest : `/${rest}`
	}
	const query = normal.indexOf('?')
	const path = query === -1 ? normal : normal.slice(0, query)
	if (!UNUSUAL_PATH.test(path)) return normal
	return withLiteralBrokenEscapes(path.replace(/[\\/]+/g, '/')) + (query === -1 ? '' : normal.slice(query))
}

/** @param {string} path */
function withLiteralBrokenEscapes(path) {
	if (!path.includes('%')) return path
	return path
		.split('/')
		.map((segment) => {
			try {
				decodeURIComponent(segment)
				return segment
			} catch {
				return segment.replace(/%/g, '%25')
			}
		})
		.join('/')
}

/**
 * The path the Fetch Request built from this target holds: the URL parser resolves its dot segments
 * (`/x/../api/nope` is `/api/nope`, and so is `/x/%2e%2e/api/nope`).
 *
 * @param {string} pathname
 */
export function resolvedPath(pathname) {
	return pathname.includes('.') || pathname.includes('%') ? new URL(pathname, 'http://resolving.invalid').pathname : pathname
}

/**
 * The path as Remix's router matches it: each segment percent-decoded (an encoded `/` stays encoded,
 * as React Router's decodePath keeps it), so `/%61pi/nope` is the API's path `/api/nope`. A segment
 * that does not decode is left as it is.
 *
 * @param {string} pathname
 */
export function routedPath(pathname) {
	if (!pathname.includes('%')) return pathname
	return pathname
		.split('/')
		.map((segment) => {
			try {
				return decodeURIComponent(segment).replace(/\//g, '%2F')
			} catch {
				return segment
			}
		})
		.join('/')
}

/**
 * An /api/* target without Remix's instructions, for the requests the API hands to Remix (its catch-all
 * and dynamic routes): every /api/* answer is the API's own JSON, never another route's data. Remix
 * reads the query decoded: `_data` (also written `%5Fdata`) turns a request into a call of the named
 * route's loader or action (`/api/nope?_data=root` would answer the root loader's data), `index` sends
 * a POST to an index route. Those requests are rare, so the query is parsed as Remix parses it.
 *
 * @param {string} target a normalized target (normalizeTarget)
 */
export function withoutRemixInstructions(target) {
	const query = target.indexOf('?')
	if (query === -1) return target
	const params = new URLSearchParams(target.slice(query + 1))
	if (!params.has('_data') && !params.has('index')) return target
	params.delete('_data')
	params.delete('index')
	const rest = params.toString()
	return target.slice(0, query) + (rest ? `?${rest}` : '')
}
