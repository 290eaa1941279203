import { z } from 'zod'
import { isApiPath } from './api-path.ts'
import { env } from './env.server.ts'
import { notDeclared, PayloadTooLargeError, readBodyBytes, UnacceptedBodyError, utf8Text } from './http.server.ts'

/**
 * Cross-site form posts are refused: the browser's Origin (or, failing that, Sec-Fetch-Site) must be
 * this site. Same-site posts from our own pages always carry one of them in today's browsers.
 */
export function isSameOrigin(request: Request) {
	const origin = request.headers.get('Origin')
	if (origin && origin !== 'null') {
		if (origin === new URL(env().APP_URL).origin) return true
		// The request's own host, over either scheme: behind a proxy that ends TLS the browser's page is
		// https:// while the request reaches us over http, and APP_URL may not be set (forms need no key).
		// The host is what makes an origin ours; a page of another site cannot send ours.
		const { host } = new URL(request.url)
		return origin === `http://${host}` || origin === `https://${host}`
	}
	const fetchSite = request.headers.get('Sec-Fetch-Site')
	if (fetchSite) return fetchSite === 'same-origin' || fetchSite === 'none'
	return origin !== 'null' // a client without either header is not a browser: no ambient cookies to abuse
}

/**
 * Page form posts from another site are answered 403 before any action runs (server/app-server.js
 * calls this for every non-API write), rather than reaching Remix's own check, which answers 500.
 */
export function crossSiteFormRefusal(request: Request): Response | null {
	if (request.method === 'GET' || request.method === 'HEAD') return null
	if (isApiPath(new URL(request.url).pathname)) return null // JSON-only, see readJsonBody
	if (isSameOrigin(request)) {
		// A browser under a "no-referrer" policy sends `Origin: null` even to the page's own site (Fetch
		// spec); Sec-Fetch-Site showed it is ours. Remix's check would take "null" for another site and
		// answer 500, so the header that says nothing goes (docs/decisions/0007).
		if (request.headers.get('Origin') === 'null') request.headers.delete('Origin')
		return null
	}
	return new Response('Cross-site form posts are not accepted.', {
		status: 403,
		headers: { 'Content-Type': 'text/plain; charset=utf-8' },
	})
}

/**
 * A page form's body may be larger than the API's 64 KiB for the same text: url-encoding writes each
 * byte of a non-ASCII character as %XX, so the contact message's 10 000 characters take up to 90 KB in
 * Chinese or Japanese and 120 KB in emoji. 256 KiB holds the longest valid form in any script.
 */
export const FORM_MAX_BYTES = 256 * 1024

/**
 * The url-encoded pairs, each name and value decoded as UTF-8 strictly: a byte that is not UTF-8
 * (`%FF`) or a broken escape (`%zz`) refuses the form, as the API refuses such a body, where
 * URLSearchParams would turn it into U+FFFD (or keep it as typed) and send that on. Browsers never
 * send either from our pages, which are UTF-8.
 */
function strictlyDecoded(body: string): URLSearchParams | null {
	const form = new URLSearchParams()
	const decode = (part: string) => decodeURIComponent(part.includes('+') ? part.replace(/\+/g, ' ') : part)
	try {
		for (const pair of body.split('&')) {
			if (pair === '') continue
			const equals = pair.indexOf('=')
			form.append(decode(equals === -1 ? pair : pair.slice(0, equals)), equals === -1 ? '' : decode(pair.slice(equals + 1)))
		}
	} catch {
		return null
	}
	return form
}

const NOT_READABLE = 'The form could not be read: send it url-encoded, in UTF-8.'

/**
 * A page action's form body: url-encoded in UTF-8, at most FORM_MAX_BYTES. The same rules as an /api/*
 * JSON body (http.server.ts: the media type in any case, no other charset, no Content-Encoding, strict
 * UTF-8, a byte-order mark dropped). Refusals are thrown responses (the page's 4xx). Line breaks are
 * the schemas' to count (validation/text.ts), as for the API.
 */
export async function readForm(request: Request): Promise<URLSearchParams> {
	const refusal = notDeclared(request, 'form')
	if (refusal) throw new Response(refusal === 'type' ? 'Forms must be sent url-encoded.' : NOT_READABLE, { status: 415 })
	let bytes: Buffer
	try {
		bytes = await readBodyBytes(request, FORM_MAX_BYTES)
	} catch (error) {
		if (error instanceof PayloadTooLargeError) throw new Response('The form is too large.', { status: 413 })
		if (error instanceof UnacceptedBodyError) throw new Response(error.message, { status: 415 })
		throw error
	}
	const text = utf8Text(bytes)
	const form = text === null ? null : strictlyDecoded(text)
	if (!form) throw new Response(NOT_READABLE, { status: 400 })
	return form
}

export type FieldErrors = Record<string, string>

export function fieldErrors(error: z.ZodError): FieldErrors {
	const errors: FieldErrors = {}
	for (const issue of error.issues) {
		const field = String(issue.path[0] ?? 'form')
		errors[field] ??= issue.message
	}
	return errors
}

/**
 * Which of a page's forms was sent (several forms on one page post to one action with an `intent`
 * field): one of `intents`, or null for anything else, which the action answers with 400.
 */
export function formIntent<const Intent extends string>(form: URLSearchParams, intents: readonly [Intent, ...Intent[]]): Intent | null {
	const parsed = z.enum(intents).safeParse(form.get('intent'))
	return parsed.success ? parsed.data : null
}
