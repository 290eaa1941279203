import { decodeJwt } from '@clerk/backend/jwt'
import { withinDeadline } from './deadline.server.ts'
import { tokensClerkVerifies, withoutTokens } from './handshake-nonce.server.ts'

// Without CLERK_JWT_KEY, Clerk verifies a token with the keys its Backend API publishes, and fetches
// that list again whenever a token names a key id (`kid`) it has not cached. Anyone can write a token
// with a made-up kid: each one made a Backend API call on our secret key (with retries when it
// failed), spending the quota that sign-out and deletion filings need. Key ids are checked here first
// (auth.server.ts keeps tokens naming others from Clerk). The list is fetched again for an unknown kid
// at most every REFETCH_MS (a key Clerk has just rotated in waits that long at most), and after a
// failed fetch not before RETRY_MS: meanwhile such tokens cannot be verified (the provider's outage).

const REFETCH_MS = 10_000
const RETRY_MS = 2_000
// As long as a session verification waits for the provider (auth.server.ts).
const FETCH_DEADLINE_MS = 5_000

/** `kids`: those the provider does not publish (unknown), or that could not be checked (keys-not-loaded). */
export type KeyCheck =
	{ outcome: 'published' } | { outcome: 'unknown'; kids: Set<string> } | { outcome: 'keys-not-loaded'; kids: Set<string>; detail: string }

let published: { kids: Set<string>; fetchedAt: number } | undefined
let failed: { detail: string; at: number } | undefined
let fetching: Promise<Set<string>> | undefined

/**
 * The key id a token names as Clerk reads it (its own decoder): '' when the header names none (Clerk
 * then fetches too), null when Clerk cannot decode the token at all and refuses it without a call.
 */
export function keyIdOf(token: string): string | null {
	let header: unknown
	try {
		header = decodeJwt(token).header
	} catch {
		return null
	}
	if (header === null || header === undefined) return null
	const { kid } = header as { kid?: unknown }
	return typeof kid === 'string' ? kid : ''
}

/**
 * Which of `kids` the provider does not publish. `fetchKeyIds` asks the provider for its list; one
 * fetch at a time, shared by the requests waiting for it. An empty list is a failure, as for Clerk.
 */
export async function checkKeyIds(kids: readonly string[], fetchKeyIds: () => Promise<string[]>): Promise<KeyCheck> {
	const unknownTo = (known: Set<string> | undefined) => new Set(kids.filter((kid) => !known?.has(kid)))
	if (unknownTo(published?.kids).size === 0) return { outcome: 'published' }
	const now = Date.now()
	if (published && now - published.fetchedAt < REFETCH_MS) return { outcome: 'unknown', kids: unknownTo(published.kids) }
	if (failed && now - failed.at < RETRY_MS) return { outcome: 'keys-not-loaded', kids: unknownTo(published?.kids), detail: failed.detail }
	fetching ??= fetchPublished(fetchKeyIds).finally(() => (fetching = undefined))
	try {
		const unknown = unknownTo(await fetching)
		return unknown.size === 0 ? { outcome: 'published' } : { outcome: 'unknown', kids: unknown }
	} catch (error) {
		return { outcome: 'keys-not-loaded', kids: unknownTo(published?.kids), detail: (error as Error).message }
	}
}

async function fetchPublished(fetchKeyIds: () => Promise<string[]>): Promise<Set<string>> {
	try {
		const list = await withinDeadline(fetchKeyIds(), FETCH_DEADLINE_MS, () => new Error(`no answer within ${FETCH_DEADLINE_MS} ms`))
		if (list.length === 0) throw new Error('the key list names no keys')
		published = { kids: new Set(list), fetchedAt: Date.now() }
		failed = undefined
		return published.kids
	} catch (error) {
		failed = { detail: (error as Error).message, at: Date.now() }
		throw error
	}
}

/** What Clerk may see of a request: `request` (dropped: some tokens were left out), or why it sees nothing. */
export type KeptTokens = { request: Request; dropped: boolean } | { refused: true } | { notVerified: string }

/**
 * `request` without the tokens whose key id the provider does not publish, or that could not be
 * checked, so Clerk never fetches its list for them. For the API (`api`), the Authorization token is
 * the credential the session cache is keyed by: one of those is refused, not dropped (Clerk would read
 * the cookies instead), and a list that cannot be fetched is the provider's outage. A page goes to
 * Clerk without them: signed out, or through a handshake when its cookies say it was signed in.
 * Another instance's session cookie with a key of its own is dropped, and the session beside it counts.
 */
export async function withPublishedKeysOnly(
	request: Request,
	sessionCookies: ReadonlySet<string>,
	fetchKeyIds: () => Promise<string[]>,
	{ api }: { api: boolean },
): Promise<KeptTokens> {
	const tokens = tokensClerkVerifies(request, sessionCookies).flatMap((token) => {
		const kid = keyIdOf(token.token)
		return kid === null ? [] : [{ ...token, kid }]
	})
	if (tokens.length === 0) return { request, dropped: false }
	const check = await checkKeyIds(
		tokens.map((token) => token.kid),
		fetchKeyIds,
	)
	if (check.outcome === 'published') return { request, dropped: false }
	if (api && check.outcome === 'keys-not-loaded') return { notVerified: check.detail }
	const unresolved = tokens.filter((token) => check.kids.has(token.kid))
	if (api && unresolved.some((token) => token.in === 'header')) return { refused: true }
	return { request: withoutTokens(request, unresolved, sessionCookies), dropped: true }
}
