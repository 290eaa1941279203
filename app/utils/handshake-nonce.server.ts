import type { AppLoadContext } from '@remix-run/node'
import { handshakeNonceEveryone, handshakeNoncePerClient } from './abuse-limits.server.ts'
import { clientIp } from './client-ip.server.ts'

// Clerk's handshake can end with a nonce (in the query or a cookie) that Clerk's SDK trades for the
// session's cookies through a Backend API call. Anyone can send a made-up one: each costs us a call
// against the API's quota and, when the call fails, a stack trace in our log
// (docs/decisions/0023-handshake-nonce-budget.md).

const HANDSHAKE_NONCE = '__clerk_handshake_nonce'
const HANDSHAKE_NONCE_COOKIE = /^\s*__clerk_handshake_nonce\s*=/
const NOTE_INTERVAL_MS = 60_000

function carriesHandshakeNonce(request: Request) {
	return request.url.includes(HANDSHAKE_NONCE) || request.headers.get('Cookie')?.includes(HANDSHAKE_NONCE) === true
}

/**
 * The request Clerk sees for a page. Within the budget (abuse-limits.server.ts) it goes as it came;
 * past it, without the nonce, so Clerk reads the session cookies as it would without one (a valid
 * session still counts; an expired one takes a fresh handshake, which Clerk's own loop guard bounds).
 */
export async function withinHandshakeBudget(args: { request: Request; context: AppLoadContext }): Promise<Request> {
	const { request } = args
	if (!carriesHandshakeNonce(request)) return request
	const client = await handshakeNoncePerClient.consume(clientIp(request, args.context.remoteAddress))
	const everyone = client.allowed ? await handshakeNonceEveryone.consume('all') : undefined
	if (everyone?.allowed) return request
	notes.pastBudget++
	noteNow()
	return withoutHandshakeNonce(request)
}

/**
 * `request` as Clerk would see it with no handshake nonce (Clerk reads only its address and headers).
 * The root loader hands this to rootAuthLoader: the page's session check has dealt with the nonce by
 * then (resolved, which ends in Clerk's redirect, or found wanting), and a second look would ask the
 * Backend API again.
 */
export function withoutHandshakeNonce(request: Request): Request {
	if (!carriesHandshakeNonce(request)) return request
	const url = new URL(request.url)
	url.searchParams.delete(HANDSHAKE_NONCE)
	const headers = new Headers(request.headers)
	const cookies = request.headers.get('Cookie')
	if (cookies)
		headers.set(
			'Cookie',
			cookies
				.split(';')
				.filter((cookie) => !HANDSHAKE_NONCE_COOKIE.test(cookie))
				.join(';'),
		)
	return new Request(url, { method: request.method, headers })
}

// What Clerk's SDK logs, with the error's whole stack, when a nonce cannot be traded.
const CLERK_HANDSHAKE_FAILURES = ['Clerk: HandshakeService: error getting handshake payload:', 'Clerk: unable to resolve handshake:']

const notes = { pastBudget: 0, unresolved: 0, lastReason: '', notedAt: 0 }

/** Said when first seen and then at most once a minute, with counts: the log is not the client's to fill. */
function noteNow() {
	const now = Date.now()
	if (now - notes.notedAt < NOTE_INTERVAL_MS) return
	const unresolved = notes.unresolved ? `${notes.unresolved} could not be resolved (last: ${notes.lastReason})` : ''
	const pastBudget = notes.pastBudget ? `${notes.pastBudget} past the budget were not tried` : ''
	console.warn(`auth: handshake nonces since the last note: ${[unresolved, pastBudget].filter(Boolean).join('; ')}`)
	Object.assign(notes, { pastBudget: 0, unresolved: 0, lastReason: '', notedAt: now })
}

/**
 * Clerk's own failure lines for a nonce are counted into the note above instead of written with
 * their stack (installed at start-up). Every other console.error is untouched.
 */
let counting = false
export function countClerkHandshakeFailures() {
	if (counting) return
	counting = true
	const write = console.error
	console.error = (...args: unknown[]) => {
		const [first, error] = args
		if (typeof first !== 'string' || !CLERK_HANDSHAKE_FAILURES.some((prefix) => first.startsWith(prefix))) return write(...args)
		notes.unresolved++
		const reason = error instanceof Error ? error.message : String(error)
		notes.lastReason = reason.replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, 120)
		noteNow()
	}
}
