import crypto from 'node:crypto'
import { createClerkClient, type ClerkClient } from '@clerk/backend'
import { getAuth } from '@clerk/remix/ssr.server'
import { parsePublishableKey } from '@clerk/shared/keys'
import { redirect, type AppLoadContext } from '@remix-run/node'
import type { Params } from '@remix-run/react'
import { env } from './env.server.ts'
import { withinDeadline } from './deadline.server.ts'
import { cookiesForClerk, handshakeClerkFinds, withinHandshakeBudget, type ClerkInstance } from './handshake-nonce.server.ts'
import { keyIdRefusedByClerk, keysNotLoadedByClerk, withKnownKeyIdsOnly, type KeySource } from './token-key-ids.server.ts'
import { errorResponse } from './http.server.ts'
import { noteOncePerMinute, printableForLog } from './log-note.server.ts'
import { SESSION_REFRESHED } from './session-refresh.ts'

let client: ClerkClient | undefined

/** One Backend API client per process; it caches the verification key. */
export function clerkClient(): ClerkClient {
	const config = env()
	client ??= createClerkClient({
		secretKey: config.CLERK_SECRET_KEY,
		publishableKey: config.CLERK_PUBLISHABLE_KEY,
		jwtKey: config.CLERK_JWT_KEY,
		// createClerkClient does not read CLERK_API_URL by itself (unlike getAuth): pass it.
		apiUrl: config.CLERK_API_URL,
	})
	return client
}

// Verified sessions, by the exact credentials presented. RS256 verification runs on libuv's thread pool
// for every request otherwise; the same credentials always verify the same way, so a success is
// remembered until the token's own expiry (Clerk tokens live about a minute). Failures are never
// remembered. The key holds every cookie Clerk chooses among (__session, __client_uat and the
// dev-browser token, suffixed or not, in the order sent), so a signed-out browser is not let in by a
// cache, and a key maps only to what Clerk verified for those very cookies. It is a digest: the client
// writes these values, and a key of their bytes let one signed-in client fill the map with 10 000
// variants of 15 KB each (a `__client_uat` of "1" and junk still parses as 1), past the heap's cap.
const VERIFIED_LIMIT = 10_000
const verified = new Map<string, { userId: string; expiresAt: number }>()

const BEARER = /^Bearer\s+(\S+)$/i
// Cookie names as Clerk's parser reads them: trimmed, with or without the instance's suffix.
const CHOSEN_AMONG = /^\s*(__session|__client_uat|__clerk_db_jwt)(_[^=]*)?\s*=/
const SESSION_TOKEN = /^\s*__session(_[^=]*)?\s*=/

// The one-shot hash (Node 20.12+): no Hash object per request.
const digest = (text: string) => crypto.hash('sha256', text, 'base64')

function credentialsOf(request: Request) {
	const bearer = request.headers.get('Authorization')?.match(BEARER)?.[1]
	if (bearer) return `bearer:${digest(bearer)}`
	const cookies = request.headers.get('Cookie')
	if (!cookies?.includes('__session')) return null
	const chosenAmong = cookies.split(';').filter((cookie) => CHOSEN_AMONG.test(cookie))
	// No session cookie among them (`x__session=…`): nothing to verify, and no key that another
	// request's cookies could also digest to.
	if (!chosenAmong.some((cookie) => SESSION_TOKEN.test(cookie))) return null
	return `cookie:${digest(chosenAmong.join(';'))}`
}

function remember(key: string, userId: string, exp: unknown) {
	if (typeof exp !== 'number') return
	// Entries are kept in insertion order, which is close to expiry order (tokens share one lifetime):
	// dropping expired ones from the head keeps the map to sessions seen within a token's lifetime,
	// a few MB, instead of filling up to the limit with dead tokens.
	const now = Date.now()
	for (const [oldKey, entry] of verified) {
		if (entry.expiresAt > now && verified.size < VERIFIED_LIMIT) break
		verified.delete(oldKey)
	}
	verified.set(key, { userId, expiresAt: exp * 1000 })
}

// One note per reason (Clerk's reasons and ours: a fixed few), so one reason does not hide another.
const refusalNotes = new Map<string, (detail?: string) => void>()

/**
 * Without CLERK_JWT_KEY, Clerk verifies a token with the keys its Backend API publishes, fetched when
 * a token names a key it has not cached (and again every 5 minutes). When that fetch fails, or hangs,
 * nothing is known about the token: refusing it as signed out would tell a signed-in user to sign
 * in again, and a hang would hold the request with no end. It is answered as the provider's outage
 * instead: 503 identity-provider-unavailable, safe to retry (the status API, its fallback payload).
 */
export class SessionCannotBeVerified extends Error {
	constructor(readonly detail: string) {
		super(`the identity provider's signing keys could not be loaded (${detail})`)
		this.name = 'SessionCannotBeVerified'
	}
}
const KEYS_NOT_LOADED = 'jwk-remote-failed-to-load'
// Clerk's own reasons for a token whose key id its list does not name, and for one not signed with
// CLERK_JWT_KEY: the log reads the same whether Clerk or token-key-ids.server.ts refused it.
const KID_NOT_PUBLISHED = 'jwk-kid-mismatch'
const NOT_SIGNED_WITH_JWT_KEY = 'token-invalid-signature'
// As long as the deletion request's email lookup waits (identity.server.ts).
const VERIFY_DEADLINE_MS = 5_000

/**
 * Clerk answers a token it cannot verify with a signed-out state, not an error: an expired token, a
 * forged one, but also a wrong CLERK_JWT_KEY, which refuses every user (keys it could not fetch are
 * answered as an outage: SessionCannotBeVerified).
 * Each reason is logged when first seen and then at most once a minute with a count, so an operator
 * sees the second kind without a client being able to flood the log with the first. `detail` (what
 * the client sent may shape it) is logged with the note, never used as a key.
 */
function noteRefusedSession(reason: string | null, detail?: string) {
	const key = reason ?? 'unknown'
	let note = refusalNotes.get(key)
	if (!note) {
		const outcome = key === KEYS_NOT_LOADED ? 'not verified' : 'refused'
		const answered = key === KEYS_NOT_LOADED ? '503 (the status API its fallback)' : '401'
		note = noteOncePerMinute((count, latestDetail?: string) => {
			const about = latestDetail ? `${key}: ${printableForLog(latestDetail, 120)}` : key
			console.warn(`auth: ${count} session token(s) ${outcome} (${about}) since the last note; each answered ${answered}`)
		})
		refusalNotes.set(key, note)
	}
	note(detail)
}

const HANDSHAKE_COOKIE = /^\s*__clerk_handshake/

/**
 * The headers Clerk sees for an API request: the credential credentialsOf keys the cache by, and no
 * other. HTTP's auth scheme is case-insensitive (RFC 9110 §11.1) and `bearer <token>` is common; Clerk
 * reads only the exact `Bearer ` (the token is passed untouched).
 * Handshake cookies are left out: an API request never takes part in a handshake (decision 0005),
 * and with one Clerk asks its Backend API for the handshake's payload, and logs the failure, on every
 * request that carries a made-up nonce: a client could spend our API quota and fill the log. So are
 * refresh cookies and cookies Clerk cannot decode (cookiesForClerk): the first would let anyone direct
 * a Backend API call, the second would make Clerk refuse a valid session.
 * With a Bearer token the cookies are left out too: the token is the credential, and Clerk, though it
 * verifies only the token, still decodes the session cookies beside it and throws on one it cannot
 * (`__session=not.a.jwt`, another application's cookie on the domain): a valid token was refused.
 */
function apiHeadersForClerk(headers: Headers): Headers {
	const authorization = headers.get('Authorization')
	const token = authorization?.match(BEARER)?.[1]
	const cookies = headers.get('Cookie')
	if (token !== undefined) {
		if (cookies === null && authorization === `Bearer ${token}`) return headers
		const forClerk = new Headers(headers)
		forClerk.set('Authorization', `Bearer ${token}`)
		forClerk.delete('Cookie')
		return forClerk
	}
	// Any other Authorization (a bare token, another scheme) is not a credential here (credentialsOf
	// keys such a request by its cookies), but Clerk would read a bare token before the cookies: it
	// would verify one credential while the cache remembered the result under another.
	const notBearer = authorization !== null
	const readable = cookies === null ? null : cookiesForClerk(cookies)
	const handshake = readable?.includes('__clerk_handshake') === true
	if (!notBearer && !handshake && readable === cookies) return headers
	const forClerk = new Headers(headers)
	if (notBearer) forClerk.delete('Authorization')
	if (readable !== null) {
		const kept = handshake ? readable.split(';').filter((cookie) => !HANDSHAKE_COOKIE.test(cookie)) : [readable]
		forClerk.set('Cookie', kept.join(';'))
	}
	return forClerk
}

/**
 * The identity-provider user id of the request's session, or null. API routes use this rather than
 * @clerk/remix's getAuth, which may throw a 307 "handshake" redirect: an API client must get JSON 401.
 */
export async function sessionUserId(request: Request): Promise<string | null> {
	const config = env()
	if (!config.clerkConfigured) return null
	const key = credentialsOf(request)
	if (!key) return null
	const known = verified.get(key)
	if (known && known.expiresAt > Date.now()) return known.userId
	try {
		// Clerk needs only the URL and headers. Handing it a body-less copy keeps it from cloning the
		// body stream, which fails under some adapters ("duplex option is required").
		// Without the query, which can carry a handshake nonce too.
		const url = new URL(request.url)
		const headersOnly = new Request(`${url.origin}${url.pathname}`, { method: 'GET', headers: apiHeadersForClerk(request.headers) })
		// A handshake or refresh cookie Clerk would still read (a %-escaped name the filters above do not
		// know) was made by hand: no Backend API call for it.
		const hidden = handshakeClerkFinds(headersOnly)
		if (hidden.anyCookie || hidden.refreshCookie) {
			noteRefusedSession(hidden.anyCookie ? 'hidden-handshake-cookie' : 'hidden-refresh-cookie')
			return null
		}
		// Only tokens whose key id is the provider's: Clerk keeps what it learns of any other (token-key-ids).
		const kept = await withKnownKeyIdsOnly(headersOnly, clerkInstance(), keySource(), { api: true })
		if ('notVerified' in kept) throw new SessionCannotBeVerified(kept.notVerified)
		if ('refused' in kept) {
			noteRefusedSession(keyIdRefusal())
			return null
		}
		const verification = clerkClient().authenticateRequest(kept.request, {
			jwtKey: config.CLERK_JWT_KEY,
			authorizedParties: [new URL(config.APP_URL).origin],
		})
		// With CLERK_JWT_KEY, verification makes no call: no deadline to keep.
		const state = await (config.CLERK_JWT_KEY
			? verification
			: withinDeadline(verification, VERIFY_DEADLINE_MS, () => {
					// Clerk is still fetching its key list (it does not give up on a provider that does not
					// answer): as when it could not, the next tokens wait for a fetch of ours rather than start one each.
					const detail = `no answer within ${VERIFY_DEADLINE_MS} ms`
					keysNotLoadedByClerk(detail)
					return new SessionCannotBeVerified(detail)
				}))
		if (!state.isSignedIn) {
			if (state.reason === KEYS_NOT_LOADED) {
				keysNotLoadedByClerk(state.message ?? KEYS_NOT_LOADED)
				throw new SessionCannotBeVerified(state.message)
			}
			if (state.reason === KID_NOT_PUBLISHED) keyIdRefusedByClerk()
			noteRefusedSession(state.reason)
			return null
		}
		const auth = state.toAuth()
		remember(key, auth.userId, auth.sessionClaims.exp)
		return auth.userId
	} catch (error) {
		if (error instanceof SessionCannotBeVerified) {
			noteRefusedSession(KEYS_NOT_LOADED, error.detail)
			throw error
		}
		// A token Clerk cannot even parse ("not.a.jwt") throws instead of returning a reason: anyone can
		// send one, so it is counted like the other refusals rather than logged per request.
		noteRefusedSession('token-unreadable', (error as Error).message)
		return null
	}
}

/** What Clerk knows of this instance when it picks a session cookie: its suffix (getCookieSuffix) and frontend API. */
function clerkInstance(): ClerkInstance {
	if (!instance) {
		const publishableKey = env().CLERK_PUBLISHABLE_KEY ?? ''
		const suffix = crypto.createHash('sha1').update(publishableKey).digest('base64url').slice(0, 8)
		instance = { suffixedSession: `__session_${suffix}`, frontendApi: parsePublishableKey(publishableKey)?.frontendApi ?? '' }
	}
	return instance
}
let instance: ClerkInstance | undefined

/** Key ids are checked against CLERK_JWT_KEY when set, else against the list the provider publishes. */
function keySource(): KeySource {
	const pem = env().CLERK_JWT_KEY
	return pem ? { pem } : { fetchKeyIds: async () => ((await clerkClient().jwks.getJwks()).keys ?? []).map((key) => key.kid) }
}
const keyIdRefusal = () => (env().CLERK_JWT_KEY ? NOT_SIGNED_WITH_JWT_KEY : KID_NOT_PUBLISHED)

/**
 * For /api/* routes: the signed-in user's identity-provider id, or a thrown JSON 401 (503 when the
 * provider's keys could not be loaded to verify the session).
 */
export async function requireApiSession(request: Request): Promise<string> {
	// try/catch rather than .catch(): no extra promise on every signed-in write.
	let clerkId: string | null
	try {
		clerkId = await sessionUserId(request)
	} catch (error) {
		throw error instanceof SessionCannotBeVerified ? errorResponse('identity-provider-unavailable') : error
	}
	if (!clerkId) throw errorResponse('unauthorized')
	return clerkId
}

/**
 * For page loaders and actions: the session's user id via @clerk/remix, which may throw Clerk's 307
 * handshake redirect to refresh an expired session (right for a browser, unlike an API client).
 */
export function pageUserId(args: { request: Request; context: AppLoadContext; params: Params }): Promise<string | null> {
	return pageSession(args).then((session) => session?.userId ?? null)
}

export type PageSession = { userId: string; sessionId: string }

/** pageUserId with the session's own id (which sign-out revokes). */
export function pageSession(args: { request: Request; context: AppLoadContext; params: Params }): Promise<PageSession | null> {
	const config = env()
	if (!config.clerkConfigured) return Promise.resolve(null)
	// The root loader and the page's loader run for the same request: verify once. Remix hands each
	// loader its own copy of the Request (server-runtime's data.js strips ?index/_data into a new one),
	// so the load context, one object per request, is the key.
	let pending = pageSessions.get(args.context)
	if (!pending) {
		pending = pageRequestForClerk(args).then((request) =>
			getAuth({ ...args, request }, {
				secretKey: config.CLERK_SECRET_KEY,
				publishableKey: config.CLERK_PUBLISHABLE_KEY,
				jwtKey: config.CLERK_JWT_KEY,
				authorizedParties: [new URL(config.APP_URL).origin],
			} as Parameters<typeof getAuth>[1]).then(
				(auth) => (auth.userId && auth.sessionId ? { userId: auth.userId, sessionId: auth.sessionId } : null),
				(thrown: unknown) => {
					throw handshakeWithoutTheForm(args.request, thrown)
				},
			),
		)
		pageSessions.set(args.context, pending)
	}
	return pending
}

const pageSessions = new WeakMap<AppLoadContext, Promise<PageSession | null>>()
const pageRequests = new WeakMap<AppLoadContext, Promise<Request>>()

/**
 * The request Clerk sees for this page request, decided once (a handshake nonce counts against its
 * client's budget once): the page's session check and the root loader's rootAuthLoader both use it.
 */
export function pageRequestForClerk(args: { request: Request; context: AppLoadContext }): Promise<Request> {
	let pending = pageRequests.get(args.context)
	if (!pending) {
		pending = withinHandshakeBudget(args).then(pageWithKnownKeyIdsOnly)
		pageRequests.set(args.context, pending)
	}
	return pending
}

/** A page request as Clerk may see it: without tokens whose key id is not the provider's (withKnownKeyIdsOnly). */
async function pageWithKnownKeyIdsOnly(request: Request): Promise<Request> {
	const kept = await withKnownKeyIdsOnly(request, clerkInstance(), keySource(), { api: false })
	if (kept.dropped) noteRefusedSession(keyIdRefusal())
	return kept.request
}

/**
 * A form posted without JavaScript after the session token expired (tokens live about a minute, and
 * nothing renews them without Clerk's script) gets Clerk's 307 handshake redirect. A 307 makes the
 * browser post the form again, to Clerk, which the page's CSP (form-action) refuses: the browser shows
 * an error and the input is gone. Send it back to the page with a GET instead (303): that request takes
 * the handshake, comes back signed in, and the page says the form was not sent.
 */
function handshakeWithoutTheForm(request: Request, thrown: unknown): unknown {
	const isHandshake = thrown instanceof Response && thrown.status === 307
	if (!isHandshake || request.method === 'GET' || request.method === 'HEAD') return thrown
	const url = new URL(request.url)
	url.searchParams.set(SESSION_REFRESHED.param, SESSION_REFRESHED.value)
	return redirect(`${url.pathname}${url.search}`, 303)
}

/** Where a signed-out visitor goes to sign in, coming back to `returnTo` afterwards. */
export function signInUrl(returnTo: string) {
	return `/sign-in?redirect_url=${encodeURIComponent(returnTo)}`
}

/** For pages that need a user: their Clerk id (the page reads their row as it needs), or a redirect to sign in and back. */
export async function requirePageUserId(args: { request: Request; context: AppLoadContext; params: Params }, returnTo?: string) {
	const clerkId = await pageUserId(args)
	if (!clerkId) {
		const url = new URL(args.request.url)
		throw redirect(signInUrl(returnTo ?? `${url.pathname}${url.search}`), 303)
	}
	return clerkId
}

/** Admin pages exist only for ADMIN_USER_IDS: everyone else, signed in or not, gets a plain 404. */
export async function requireAdmin(args: { request: Request; context: AppLoadContext; params: Params }) {
	const clerkId = await pageUserId(args)
	if (!clerkId || !env().ADMIN_USER_IDS.has(clerkId)) throw new Response('Not Found', { status: 404 })
	return clerkId
}
