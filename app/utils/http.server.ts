import type { z } from 'zod'
import { ReadyBodyRequest, ReadyTextResponse } from './ready-bodies.server.ts'

// Every /api/* failure is { error, code } (+ detail and issues on bad-body). The status of each code
// is decided here. The exceptions are the answers server/app-server.js writes before the app is
// reached (a malformed request, an unreadable body, a failure outside the app): the same codes and
// statuses, written there by hand because the build may not be loaded yet.
export const ERROR_STATUS = {
	'bad-body': 400,
	'email-mismatch': 400,
	'bad-signature': 400,
	unauthorized: 401,
	forbidden: 403,
	'not-found': 404,
	'no-customer': 404,
	'method-not-allowed': 405,
	'already-subscribed': 409,
	'deletion-pending': 409,
	'payload-too-large': 413,
	'rate-limited': 429,
	'server-error': 500,
	'db-error': 500,
	'identity-provider-unavailable': 503,
	processor_not_configured: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

const DEFAULT_MESSAGE: Record<ErrorCode, string> = {
	'bad-body': 'The request body is not valid.',
	'email-mismatch': 'The email you typed does not match the email on your account.',
	'bad-signature': 'The webhook signature is missing or invalid.',
	unauthorized: 'You need to be signed in.',
	forbidden: 'This request is not allowed.',
	'not-found': 'Not found.',
	'no-customer': 'There is no billing account for this user yet.',
	'method-not-allowed': 'This method is not allowed here.',
	'already-subscribed': 'You already have a subscription; change plans from the billing portal.',
	'deletion-pending':
		'Your account has a pending deletion request, so a subscription cannot be started. Contact support to keep the account.',
	'payload-too-large': 'The request body is larger than 64 KiB.',
	'rate-limited': 'Too many requests. Please wait and try again.',
	'server-error': 'Something went wrong on our side. It is safe to try again.',
	'db-error': 'We could not save your request. It is safe to try again.',
	'identity-provider-unavailable': 'We could not reach the sign-in service. It is safe to try again.',
	processor_not_configured: 'Billing is not enabled in this environment.',
}

export type Issue = { path: string; message: string }

export type ErrorExtras = { error?: string; detail?: string; issues?: Issue[]; headers?: HeadersInit }

export function jsonResponse(body: unknown, init: ResponseInit = {}) {
	const headers = new Headers(init.headers)
	headers.set('Content-Type', 'application/json; charset=utf-8')
	if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'no-store')
	return new ReadyTextResponse(JSON.stringify(body), { ...init, headers })
}

export function errorResponse(code: ErrorCode, extras: ErrorExtras = {}) {
	const { headers, error, detail, issues } = extras
	const message = error ?? DEFAULT_MESSAGE[code]
	// contract.md: a bad-body answer always carries `detail` and `issues` (empty when no schema ran),
	// even when the caller passes them as undefined.
	const body =
		code === 'bad-body'
			? { error: message, code, detail: detail ?? message, issues: issues ?? [] }
			: { error: message, code, ...(detail === undefined ? {} : { detail }), ...(issues === undefined ? {} : { issues }) }
	// RFC 9110 §15.5.2: a 401 names the scheme that would be accepted. Bearer, which no browser answers
	// with a password prompt (the API also takes the session cookie, which is not a scheme).
	const answerHeaders = new Headers(headers)
	if (code === 'unauthorized') answerHeaders.set('WWW-Authenticate', 'Bearer')
	return jsonResponse(body, { status: ERROR_STATUS[code], headers: answerHeaders })
}

export function zodIssues(error: z.ZodError): Issue[] {
	return error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }))
}

export const MAX_BODY_BYTES = 64 * 1024

export class PayloadTooLargeError extends Error {
	constructor() {
		super('payload too large')
		this.name = 'PayloadTooLargeError'
	}
}

/**
 * The body stopped before its end: the client closed the connection, or its framing broke (a bad
 * chunk) and the server answered the connection's 400 itself. Nothing of ours failed; there is
 * usually nobody left to answer.
 */
export class BodyCutOffError extends Error {
	constructor() {
		super('The body ended before it was complete.')
		this.name = 'BodyCutOffError'
	}
}

/**
 * A body this server does not take as sent: compressed (`Content-Encoding`), or text that is not UTF-8.
 * The client's doing: `bad-body` on /api/*, a 4xx page for a form. Its message says what to change.
 */
export class UnacceptedBodyError extends Error {
	constructor(message: string) {
		super(message)
		this.name = 'UnacceptedBodyError'
	}
}

/** Reads at most MAX_BODY_BYTES, so a client cannot make us buffer an unbounded body. */
export async function readBodyText(request: Request, maxBytes: number = MAX_BODY_BYTES): Promise<string> {
	return (await readBodyBytes(request, maxBytes)).toString('utf8')
}

/**
 * The body's bytes as sent. A coded body (gzip, br) is refused rather than read as text: its bytes
 * would fail as "not UTF-8", or a body merely labelled coded would be taken as plain.
 */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Buffer> {
	const coding = request.headers.get('Content-Encoding')
	if (coding !== null && coding.trim().toLowerCase() !== 'identity') {
		throw new UnacceptedBodyError('The body must be sent without Content-Encoding (uncompressed).')
	}
	const declared = Number(request.headers.get('Content-Length') ?? NaN)
	if (declared > maxBytes) throw new PayloadTooLargeError()
	if (request instanceof ReadyBodyRequest) {
		const bytes = request.takeBytes()
		if (bytes.byteLength > maxBytes) throw new PayloadTooLargeError()
		return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
	}
	if (!request.body) return Buffer.alloc(0)
	const reader = request.body.getReader()
	const chunks: Uint8Array[] = []
	let size = 0
	for (;;) {
		let chunk: ReadableStreamReadResult<Uint8Array>
		try {
			chunk = await reader.read()
		} catch {
			throw new BodyCutOffError()
		}
		const { done, value } = chunk
		if (done) break
		size += value.byteLength
		if (size > maxBytes) {
			await reader.cancel()
			throw new PayloadTooLargeError()
		}
		chunks.push(value)
	}
	return Buffer.concat(chunks)
}

// JSON is UTF-8 (RFC 8259 §8.1). Bytes that are not, or a body declared in another charset, would
// otherwise reach the mail and the database as replacement characters. A leading byte-order mark is
// dropped (§8.1 lets a parser ignore it; some Windows tools write one).
const UTF8 = new TextDecoder('utf-8', { fatal: true })
const DECLARED_CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i
// US-ASCII is UTF-8's first half: a body declared in it is read the same.
const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii'])

/** The body's text, strictly UTF-8 (a leading byte-order mark dropped), or null when it is not. */
export function utf8Text(bytes: Buffer): string | null {
	try {
		return UTF8.decode(bytes)
	} catch {
		return null
	}
}

const MEDIA_TYPES = {
	json: /^application\/json\s*(;|$)/i,
	form: /^application\/x-www-form-urlencoded\s*(;|$)/i,
} as const

/**
 * Why the request's Content-Type is not `kind` in UTF-8, or null when it is: the media type in any
 * case, parameters after it, a charset (if any) of UTF-8. One rule for /api/* JSON and page forms.
 */
export function notDeclared(request: Request, kind: keyof typeof MEDIA_TYPES): 'type' | 'charset' | null {
	const contentType = request.headers.get('Content-Type') ?? ''
	if (!MEDIA_TYPES[kind].test(contentType)) return 'type'
	const charset = DECLARED_CHARSET.exec(contentType)?.[1]?.toLowerCase()
	return charset === undefined || UTF8_CHARSETS.has(charset) ? null : 'charset'
}

/**
 * Why the request's Content-Type is not JSON in UTF-8 (a `bad-body` detail), or null when it is. Every
 * /api/* body is held to it (contract §2), the processor's webhook deliveries too.
 */
export function notDeclaredJson(request: Request): string | null {
	const refusal = notDeclared(request, 'json')
	if (refusal === 'type') return 'The body must be JSON sent with Content-Type: application/json.'
	return refusal === 'charset' ? 'The body must be JSON in UTF-8.' : null
}

export type BodyResult<T> = { ok: true; data: T } | { ok: false; response: Response }

/**
 * The one way an /api/* route reads its body: application/json only (so a plain cross-site HTML form
 * cannot post it), 64 KiB at most, valid JSON, then the route's zod schema.
 */
export async function readJsonBody<S extends z.ZodType>(request: Request, schema: S): Promise<BodyResult<z.output<S>>> {
	const refusal = notDeclaredJson(request)
	if (refusal) return { ok: false, response: errorResponse('bad-body', { detail: refusal }) }
	let bytes: Buffer
	try {
		bytes = await readBodyBytes(request, MAX_BODY_BYTES)
	} catch (error) {
		if (error instanceof PayloadTooLargeError) return { ok: false, response: errorResponse('payload-too-large') }
		if (error instanceof UnacceptedBodyError) return { ok: false, response: errorResponse('bad-body', { detail: error.message }) }
		throw error
	}
	const text = utf8Text(bytes)
	if (text === null) return { ok: false, response: errorResponse('bad-body', { detail: 'The body is not valid UTF-8.' }) }
	let raw: unknown
	try {
		raw = JSON.parse(text)
	} catch {
		return { ok: false, response: errorResponse('bad-body', { detail: 'The body is not valid JSON.' }) }
	}
	const parsed = schema.safeParse(raw)
	if (!parsed.success) {
		const issues = zodIssues(parsed.error)
		return {
			ok: false,
			response: errorResponse('bad-body', {
				detail: issues.map((issue) => `${issue.path || 'body'}: ${issue.message}`).join('; '),
				issues,
			}),
		}
	}
	return { ok: true, data: parsed.data }
}

const retryAfterHeaders = (seconds: number | undefined) => (seconds ? { 'Retry-After': String(seconds) } : undefined)

/** A domain function's error, mapped to HTTP here (status from ERROR_STATUS, Retry-After when given). */
export function domainErrorResponse(failure: { code: ErrorCode; retryAfterSeconds?: number; detail?: string }) {
	return errorResponse(failure.code, { headers: retryAfterHeaders(failure.retryAfterSeconds), detail: failure.detail })
}

/**
 * The same mapping for a page's form refused for a domain error: the page answers with the status
 * and Retry-After the API would, and its own words in the body.
 */
export function refusalInit(failure: { code: ErrorCode; retryAfterSeconds?: number }): ResponseInit {
	return { status: ERROR_STATUS[failure.code], headers: retryAfterHeaders(failure.retryAfterSeconds) }
}
