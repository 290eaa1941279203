import { createClerkRequest } from '@clerk/backend/internal'
import { decodeJwt } from '@clerk/backend/jwt'
import type { AppLoadContext } from '@remix-run/node'
import { handshakeNoncePerClient } from './abuse-limits.server.ts'
import { clientIp } from './client-ip.server.ts'
import { printableForLog } from './log-note.server.ts'

// Clerk's handshake can end with a nonce (in the query or a cookie) that Clerk's SDK trades for the
// session's cookies through a Backend API call. Anyone can send a made-up one: each costs us a call
// against the API's quota and, when the call fails, a stack trace in our log
// (docs/decisions/0023-handshake-nonce-budget.md).

const HANDSHAKE_NONCE = '__clerk_handshake_nonce'
const HANDSHAKE_NONCE_COOKIE = /^\s*__clerk_handshake_nonce\s*=/
const NOTE_INTERVAL_MS = 60_000

// Clerk trades an expired session token and a `__refresh_<suffix>` cookie for fresh cookies through a
// signed Backend API call (POST /v1/sessions/<sid>/refresh). It makes that call before it checks the
// token's signature, with the token's `sid` in the path unescaped: a made-up expired token whose `sid`
// is `sess_x/revoke#`, and any refresh cookie, made an anonymous GET a Backend API POST to a path of
// the sender's choosing (@clerk/backend 2.33). The app never needs that refresh: a page renews an
// expired session through Clerk's handshake, an API client with a fresh token (decision 0023).
const REFRESH_COOKIE = /^\s*__refresh/
const REFRESH = '__refresh'

// Clerk decodes %-escapes in query names and across the whole Cookie header before it parses either
// (`%5F%5Fclerk_handshake_nonce`, `a=%3B__clerk_handshake_nonce=x`): a handshake or refresh name can
// hide only behind a `%`. Text without one and without the plain names holds none.
const mayHoldClerkName = (text: string) => text.includes('%') || text.includes('__clerk_handshake') || text.includes(REFRESH)

/** What Clerk finds of its handshake, and of a refresh cookie, in `request`, read with Clerk's own parser. */
export function handshakeClerkFinds(request: Request): { nonce: boolean; anyCookie: boolean; refreshCookie: boolean } {
	const cookies = request.headers.get('Cookie') ?? ''
	if (!mayHoldClerkName(request.url) && !mayHoldClerkName(cookies)) return { nonce: false, anyCookie: false, refreshCookie: false }
	// Headers only: a ClerkRequest built from the request itself would take over its body.
	const seen = createClerkRequest(new Request(request.url, { headers: request.headers }))
	const names = [...seen.cookies.keys()]
	return {
		nonce: seen.clerkUrl.searchParams.has(HANDSHAKE_NONCE) || seen.cookies.has(HANDSHAKE_NONCE),
		anyCookie: names.some((name) => name.startsWith('__clerk_handshake')),
		refreshCookie: names.some((name) => name.startsWith(REFRESH)),
	}
}

const HANDSHAKE_TOKEN = '__clerk_handshake'

/** A token Clerk would verify with its signing keys, and where it was found. */
export type ClerkToken = { in: 'header' | 'query' | 'cookie'; name: string; token: string }

/** What Clerk knows of this instance when it chooses a session cookie. */
export type ClerkInstance = { suffixedSession: string; frontendApi: string }

const mayHoldClerkToken = (text: string) => text.includes('%') || text.includes('__session') || text.includes(HANDSHAKE_TOKEN)

/** The issuer a token claims, read with Clerk's decoder, or null when it claims none or cannot be decoded. */
function issuerOf(token: string): string | null {
	try {
		const { iss } = decodeJwt(token).payload as { iss?: unknown }
		return typeof iss === 'string' && iss ? iss : null
	} catch {
		return null
	}
}

/**
 * The tokens Clerk would verify in `request`, found as Clerk finds them (AuthenticateContext in
 * @clerk/backend): a handshake token in the query or a cookie; the Authorization header's (split at
 * its first space: a bare value, or the one after `Bearer`), and when there is one no cookie, as Clerk
 * then reads none; otherwise the session cookies, `__session_<suffix>` and `__session`, the latter
 * unless it names another instance as its issuer (Clerk then takes the suffixed one). With both of
 * ours, Clerk picks one by their dates: both are returned.
 */
export function tokensClerkVerifies(request: Request, instance: ClerkInstance): ClerkToken[] {
	const tokens: ClerkToken[] = []
	const cookies = request.headers.get('Cookie') ?? ''
	const seen =
		mayHoldClerkToken(request.url) || mayHoldClerkToken(cookies)
			? createClerkRequest(new Request(request.url, { headers: request.headers }))
			: null
	const handshakeInQuery = seen?.clerkUrl.searchParams.get(HANDSHAKE_TOKEN)
	if (handshakeInQuery) tokens.push({ in: 'query', name: HANDSHAKE_TOKEN, token: handshakeInQuery })
	const handshakeCookie = seen?.cookies.get(HANDSHAKE_TOKEN)
	if (handshakeCookie) tokens.push({ in: 'cookie', name: HANDSHAKE_TOKEN, token: handshakeCookie })
	const authorization = request.headers.get('Authorization')
	if (authorization) {
		const [scheme, token] = authorization.split(' ', 2)
		const inHeader = token ? (scheme === 'Bearer' ? token : undefined) : scheme
		if (inHeader) return [...tokens, { in: 'header', name: 'Authorization', token: inHeader }]
	}
	const suffixed = seen?.cookies.get(instance.suffixedSession)
	if (suffixed) tokens.push({ in: 'cookie', name: instance.suffixedSession, token: suffixed })
	const unsuffixed = seen?.cookies.get('__session')
	const issuer = unsuffixed ? issuerOf(unsuffixed) : null
	const anotherInstance = issuer !== null && issuer.replace(/https?:\/\//gi, '') !== instance.frontendApi
	if (unsuffixed && !anotherInstance) tokens.push({ in: 'cookie', name: '__session', token: unsuffixed })
	return tokens
}

/**
 * The unsuffixed `__session` among `found` (tokensClerkVerifies) when it names no issuer beside this
 * instance's suffixed session cookie. Every Clerk session token names its issuer, yet Clerk takes such
 * a cookie in place of the suffixed one (AuthenticateContext.usesSuffixedCookies): it is another
 * application's on the domain (an opaque id, JSON, a JWT of its own; Firebase Hosting passes no other
 * cookie name on), and it signed a valid session out.
 */
export function foreignUnsuffixedSession(found: readonly ClerkToken[], instance: ClerkInstance): ClerkToken | undefined {
	if (!found.some((token) => token.in === 'cookie' && token.name === instance.suffixedSession)) return undefined
	return found.find((token) => token.in === 'cookie' && token.name === '__session' && issuerOf(token.token) === null)
}

/**
 * `request` without the tokens in `drop`. Should Clerk still find one (a cookie name hidden behind
 * %-escapes, which only a hand-made request has), every cookie goes with it.
 */
export function withoutTokens(request: Request, drop: readonly ClerkToken[], instance: ClerkInstance): Request {
	const headers = new Headers(request.headers)
	if (drop.some((token) => token.in === 'header')) headers.delete('Authorization')
	const url = new URL(request.url)
	if (drop.some((token) => token.in === 'query')) url.searchParams.delete(HANDSHAKE_TOKEN)
	const names = new Set(drop.filter((token) => token.in === 'cookie').map((token) => token.name))
	const dropped = new Set(drop.map((token) => token.token))
	return withoutCookies(
		new Request(url, { method: request.method, headers }),
		url,
		(pair) => names.has(cookieName(pair)),
		(stripped) => tokensClerkVerifies(stripped, instance).some((token) => dropped.has(token.token)),
	)
}

const cookieName = (pair: string) => (pair.includes('=') ? pair.slice(0, pair.indexOf('=')) : pair).trim()

// Clerk's cookie reading: every run of %XX in the whole header through decodeURIComponent.
const CLERK_DECODES = /(%[0-9A-Z]{2})+/g
const clerkCanDecode = (text: string) => {
	try {
		text.replace(CLERK_DECODES, decodeURIComponent)
		return true
	} catch {
		return false
	}
}

/**
 * The Cookie header as Clerk may see it: without refresh cookies (REFRESH_COOKIE), and without the
 * cookies Clerk cannot read. Clerk decodes %-escapes across the whole header and throws on one that is
 * not UTF-8 (`legacy=%E9`, Latin-1 written by another application on the domain): every page would be
 * a 500 and every API request a 401. Such a cookie is not Clerk's. A refresh cookie hidden behind
 * %-escapes is left for the caller to find with handshakeClerkFinds.
 */
export function cookiesForClerk(cookies: string): string {
	const refresh = cookies.includes(REFRESH)
	if (!refresh && (!cookies.includes('%') || clerkCanDecode(cookies))) return cookies
	return cookies
		.split(';')
		.filter((cookie) => !(refresh && REFRESH_COOKIE.test(cookie)) && clerkCanDecode(cookie))
		.join(';')
}

/** `request`'s address and headers, with `cookies` (Clerk reads nothing else). */
function withCookies(request: Request, url: URL | string, cookies: string | null): Request {
	const headers = new Headers(request.headers)
	if (cookies === null) headers.delete('Cookie')
	else headers.set('Cookie', cookies)
	return new Request(url, { method: request.method, headers })
}

/**
 * The request Clerk sees for a page. Within the budget (abuse-limits.server.ts) it goes as it came;
 * past it, without the nonce, so Clerk reads the session cookies as it would without one (a valid
 * session still counts; an expired one takes a fresh handshake, which Clerk's own loop guard bounds).
 */
export async function withinHandshakeBudget(args: { request: Request; context: AppLoadContext }): Promise<Request> {
	const cookies = args.request.headers.get('Cookie')
	const readable = cookies === null ? null : cookiesForClerk(cookies)
	let request = readable === cookies ? args.request : withCookies(args.request, args.request.url, readable)
	let found = handshakeClerkFinds(request)
	// A refresh cookie hidden behind %-escapes was written by hand: the request goes as signed out.
	if (found.refreshCookie) {
		request = withCookies(request, request.url, null)
		found = handshakeClerkFinds(request)
	}
	if (!found.nonce) return request
	const budget = await handshakeNoncePerClient.consume(clientIp(request, args.context.remoteAddress))
	if (budget.allowed) return request
	notes.pastBudget++
	noteSoon()
	return withoutHandshakeNonce(request)
}

/**
 * `request` as Clerk would see it with no handshake nonce (Clerk reads only its address and headers).
 * A nonce hidden in a way the plain filter misses (a %-escaped name, a `%3B` inside another cookie's
 * value) takes every cookie with it: only a hand-made request looks like that.
 */
function withoutHandshakeNonce(request: Request): Request {
	const url = new URL(request.url)
	url.searchParams.delete(HANDSHAKE_NONCE) // matches the decoded name, as Clerk reads it
	return withoutCookies(
		request,
		url,
		(pair) => HANDSHAKE_NONCE_COOKIE.test(pair),
		(stripped) => handshakeClerkFinds(stripped).nonce,
	)
}

/**
 * `request` at `url` without the cookies `drop` names. Should Clerk still find what they held
 * (`stillFound`: a name the plain filter misses), with no cookie at all.
 */
function withoutCookies(request: Request, url: URL, drop: (pair: string) => boolean, stillFound: (stripped: Request) => boolean): Request {
	const cookies = request.headers.get('Cookie')
	const kept =
		cookies === null
			? null
			: cookies
					.split(';')
					.filter((pair) => !drop(pair))
					.join(';')
	const stripped = withCookies(request, url, kept)
	return stillFound(stripped) ? withCookies(request, url, null) : stripped
}

// What Clerk's SDK logs, with the error's whole stack, when it cannot trade a nonce or verify a
// handshake token: both can be made up by anyone.
const CLERK_HANDSHAKE_FAILURES = ['Clerk: HandshakeService: error getting handshake payload:', 'Clerk: unable to resolve handshake:']

const notes = { pastBudget: 0, unresolved: 0, lastReason: '', notedAt: 0, timer: undefined as NodeJS.Timeout | undefined }

/** Counts are said when first seen, then at most once a minute: the log is not the client's to fill. */
function noteSoon() {
	if (notes.timer) return
	const wait = Math.max(0, notes.notedAt + NOTE_INTERVAL_MS - Date.now())
	notes.timer = setTimeout(writeNote, wait).unref()
}

function writeNote() {
	const unresolved = notes.unresolved ? `${notes.unresolved} could not be resolved (last: ${notes.lastReason})` : ''
	const pastBudget = notes.pastBudget ? `${notes.pastBudget} nonce(s) past the budget were not tried` : ''
	console.warn(`auth: Clerk handshakes since the last note: ${[unresolved, pastBudget].filter(Boolean).join('; ')}`)
	Object.assign(notes, { pastBudget: 0, unresolved: 0, lastReason: '', notedAt: Date.now(), timer: undefined })
}

let counting = false

/**
 * Clerk's own failure lines for a handshake are counted into the note above instead of written with
 * their stack (installed at start-up). Every other console.error is untouched.
 */
export function countClerkHandshakeFailures() {
	if (counting) return
	counting = true
	const write = console.error
	console.error = (...args: unknown[]) => {
		const [first, error] = args
		if (typeof first !== 'string' || !CLERK_HANDSHAKE_FAILURES.some((prefix) => first.startsWith(prefix))) return write(...args)
		notes.unresolved++
		const reason = error instanceof Error ? error.message : String(error)
		notes.lastReason = printableForLog(reason, 120)
		noteSoon()
	}
}
