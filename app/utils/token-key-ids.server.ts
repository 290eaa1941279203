import crypto from 'node:crypto'
import { decodeJwt } from '@clerk/backend/jwt'
import { withinDeadline } from './deadline.server.ts'
import {
	foreignUnsuffixedSession,
	tokensClerkVerifies,
	withoutTokens,
	type ClerkInstance,
	type ClerkToken,
} from './handshake-nonce.server.ts'

// Clerk keeps what it learns of a token's key id (`kid`), and anyone can write a token with a made-up
// one. Tokens are checked here before Clerk sees them (auth.server.ts), in either configuration:
// - With CLERK_JWT_KEY, Clerk files the key under `local-<kid>` in a cache that is never emptied, for
//   every kid it is shown: 8 000 anonymous requests with made-up 8 KB kids took the server past its
//   heap and ended it. A kid is shown to Clerk once a token naming it has been signed with that key
//   (checked here: one RSA verification, for kids not seen before); other tokens are kept from it.
// - Without it, Clerk fetches its key list from the Backend API for every kid it has not cached, on
//   our secret key's quota. The list is fetched here instead, and a kid it does not name is kept from
//   Clerk; it is fetched again for such a kid at most every REFETCH_MS (a key Clerk has just rotated in
//   waits that long at most), when older than Clerk's own cache (MAX_AGE_MS), or when Clerk refuses a
//   kid the list named (keyIdRefusedByClerk). After a failed fetch, not before RETRY_MS: meanwhile such
//   tokens cannot be verified (the provider's outage).

const REFETCH_MS = 10_000
const RETRY_MS = 2_000
// Clerk empties its cache of the list every 5 minutes and fetches it again.
const MAX_AGE_MS = 4 * 60_000
// As long as a session verification waits for the provider (auth.server.ts).
const FETCH_DEADLINE_MS = 5_000

/** `kids`: those that are not the provider's (unknown), or that could not be checked (keys-not-loaded). */
type KeyCheck =
	{ outcome: 'known' } | { outcome: 'unknown'; kids: Set<string> } | { outcome: 'keys-not-loaded'; kids: Set<string>; detail: string }

/**
 * The key id a token names as Clerk reads it (its own decoder) and files it, null when Clerk cannot
 * decode the token and refuses it as it is.
 */
function keyIdOf(token: string): string | null {
	let header: unknown
	try {
		header = decodeJwt(token).header
	} catch {
		return null
	}
	if (header === null || header === undefined) return null
	// As Clerk files it (`local-${kid}`, or the list's entry under that name): an absent kid is
	// 'undefined', an array of one string that string.
	const { kid } = header as { kid?: unknown }
	try {
		return `${kid as string}`
	} catch {
		// No string at all (`{"toString":1}`): Clerk cannot file it, but may fetch its list first. Never known.
		return UNREADABLE_KID
	}
}
const UNREADABLE_KID = '\u0000unreadable'

/**
 * Whether Clerk's reading of a page's token throws rather than refusing it, which makes the page a 500:
 * three parts its decoder cannot read (`__session=not.a.jwt`), a header or payload that is no object,
 * or an issuer that is no string (AuthenticateContext reads it to choose a cookie).
 */
function clerkThrowsOn(token: string): boolean {
	if (token.split('.').length !== 3) return false
	try {
		const { header, payload } = decodeJwt(token) as { header: unknown; payload: unknown }
		if (typeof header !== 'object' || header === null || typeof payload !== 'object' || payload === null) return true
		const { iss } = payload as { iss?: unknown }
		return Boolean(iss) && typeof iss !== 'string'
	} catch {
		return true
	}
}

// --- With CLERK_JWT_KEY: key ids proven by a signature -------------------------------------------

const signedKids = new Set<string>()
let localKey: { pem: string; key: crypto.KeyObject | null } | undefined

/**
 * CLERK_JWT_KEY read as Clerk reads it (loadClerkJwkFromPem: the 2048-bit modulus between a fixed
 * prefix and suffix, newlines and PEM armour ignored), or null when that is no key: Clerk then refuses
 * every token, and so does this check.
 */
function keyOf(pem: string): crypto.KeyObject | null {
	const modulus = pem
		.replace(/\r\n|\n|\r/g, '')
		.replace('-----BEGIN PUBLIC KEY-----', '')
		.replace('-----END PUBLIC KEY-----', '')
		.replace('MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA', '')
		.replace('IDAQAB', '')
		.replace(/\+/g, '-')
		.replace(/\//g, '_')
	try {
		return crypto.createPublicKey({ key: { kty: 'RSA', n: modulus, e: 'AQAB' }, format: 'jwk' })
	} catch {
		return null
	}
}

/** Whether `token` is signed (RS256, as Clerk's keys sign) with the key `pem`. */
function signedWith(token: string, pem: string): boolean {
	if (localKey?.pem !== pem) localKey = { pem, key: keyOf(pem) }
	const [header, payload, signature] = token.split('.')
	if (!localKey.key || header === undefined || payload === undefined || signature === undefined) return false
	try {
		return crypto.verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), localKey.key, Buffer.from(signature, 'base64url'))
	} catch {
		return false
	}
}

function checkSignedKeyIds(tokens: ReadonlyArray<{ token: string; kid: string }>, pem: string): KeyCheck {
	const unknown = new Set<string>()
	for (const { token, kid } of tokens) {
		if (signedKids.has(kid)) continue
		if (signedWith(token, pem)) signedKids.add(kid)
		else unknown.add(kid)
	}
	return unknown.size === 0 ? { outcome: 'known' } : { outcome: 'unknown', kids: unknown }
}

// --- Without it: the key ids the provider publishes ----------------------------------------------

let published: { kids: Set<string>; fetchedAt: number } | undefined
let failed: { detail: string; at: number } | undefined
let fetching: Promise<Set<string>> | undefined

async function checkPublishedKeyIds(kids: readonly string[], fetchKeyIds: () => Promise<string[]>): Promise<KeyCheck> {
	const unknownTo = (known: Set<string> | undefined) => new Set(kids.filter((kid) => !known?.has(kid)))
	const now = Date.now()
	const mayFetch = !fetching && !(failed && now - failed.at < RETRY_MS)
	if (published && unknownTo(published.kids).size === 0) {
		// Named by the list: known while it is young, or old with no fetch failed since it aged. An old
		// one is fetched again meanwhile, so that a key Clerk has retired stops being named about when
		// Clerk's own copy forgets it. Once that fetch fails, Clerk's copy is as old and Clerk would fetch
		// for every token: such tokens wait for the provider, as when no list was ever fetched.
		const agedAt = published.fetchedAt + MAX_AGE_MS
		if (now < agedAt) return { outcome: 'known' }
		if (mayFetch) void startFetch(fetchKeyIds).catch(() => {})
		if (failed && failed.at >= agedAt) return { outcome: 'keys-not-loaded', kids: new Set(kids), detail: failed.detail }
		return { outcome: 'known' }
	}
	if (published && now - published.fetchedAt < REFETCH_MS) return { outcome: 'unknown', kids: unknownTo(published.kids) }
	if (failed && now - failed.at < RETRY_MS) return { outcome: 'keys-not-loaded', kids: unknownTo(published?.kids), detail: failed.detail }
	try {
		const unknown = unknownTo(await startFetch(fetchKeyIds))
		return unknown.size === 0 ? { outcome: 'known' } : { outcome: 'unknown', kids: unknown }
	} catch (error) {
		return { outcome: 'keys-not-loaded', kids: unknownTo(published?.kids), detail: (error as Error).message }
	}
}

/** The fetch on its way, or a new one: one at a time. */
function startFetch(fetchKeyIds: () => Promise<string[]>): Promise<Set<string>> {
	fetching ??= fetchPublished(fetchKeyIds).finally(() => (fetching = undefined))
	return fetching
}

/** An empty list is a failure, as for Clerk. */
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

/** Clerk refused a token for a kid its list lacks: ours may name one it has retired; it is fetched again when next needed. */
export function keyIdRefusedByClerk() {
	if (published) published.fetchedAt = 0
}

/**
 * Clerk could not fetch its list: its copy has expired, and it would fetch again for every token our
 * list still answers for (ours is often younger than Clerk's). Tokens then wait for a fetch of ours to
 * succeed, as after one of ours failed.
 */
export function keysNotLoadedByClerk(detail: string) {
	failed = { detail, at: Date.now() }
	if (published) published.fetchedAt = Math.min(published.fetchedAt, Date.now() - MAX_AGE_MS)
}

// --- What Clerk may see --------------------------------------------------------------------------

/** Where the key ids are checked against: the instance's own key, or the provider's list. */
export type KeySource = { pem: string } | { fetchKeyIds: () => Promise<string[]> }

/** What Clerk may see of a request: `request` (dropped: tokens whose key id is not the provider's were left out), or why it sees nothing. */
export type KeptTokens = PageTokens | { refused: true } | { notVerified: string }
type PageTokens = { request: Request; dropped: boolean }

/**
 * `request` without the tokens whose key id is not the provider's, or could not be checked. An API
 * request (`api`) with one is refused: Clerk would verify it, or read another credential than the one
 * the session cache keys the answer by; and a list that cannot be fetched is the provider's outage. A
 * page goes to Clerk without them: signed out, or through a handshake when its cookies say it was
 * signed in. Tokens Clerk would not verify (another instance's session cookie) are not looked at.
 * Both go without the tokens in the way of this instance's session (below). Clerk verifies `request`
 * as returned.
 */
export function withKnownKeyIdsOnly(
	request: Request,
	instance: ClerkInstance,
	source: KeySource,
	options: { api: false },
): Promise<PageTokens>
export function withKnownKeyIdsOnly(
	request: Request,
	instance: ClerkInstance,
	source: KeySource,
	options: { api: true },
): Promise<KeptTokens>
export async function withKnownKeyIdsOnly(
	request: Request,
	instance: ClerkInstance,
	source: KeySource,
	{ api }: { api: boolean },
): Promise<KeptTokens> {
	// A page's request without `drop`, checked again as it then stands: without its Authorization token
	// Clerk reads the cookies, which were not looked at beside it (each pass leaves out at least one token).
	const pageWithout = async (drop: readonly ClerkToken[]): Promise<PageTokens> => ({
		request: (await withKnownKeyIdsOnly(withoutTokens(request, drop, instance), instance, source, { api: false })).request,
		dropped: true,
	})
	const found = tokensClerkVerifies(request, instance)
	// Tokens in the way of this instance's session go first: one Clerk would throw on (`__session=not.a.jwt`;
	// Clerk reads every session cookie before it picks one, and its throw refused a valid session beside
	// it), and another application's unsuffixed __session (foreignUnsuffixedSession). Neither is a key id
	// refused (`dropped` says only that). An API request with no other token is left to Clerk (401).
	const foreign = foreignUnsuffixedSession(found, instance)
	const inTheWay = found.filter((token) => token === foreign || clerkThrowsOn(token.token))
	if (inTheWay.length > 0 && (!api || inTheWay.length < found.length)) {
		const without = withoutTokens(request, inTheWay, instance)
		return api
			? withKnownKeyIdsOnly(without, instance, source, { api: true })
			: withKnownKeyIdsOnly(without, instance, source, { api: false })
	}
	const tokens = found.flatMap((token) => {
		const kid = keyIdOf(token.token)
		return kid === null ? [] : [{ ...token, kid }]
	})
	if (tokens.length === 0) return { request, dropped: false }
	const check =
		'pem' in source
			? checkSignedKeyIds(tokens, source.pem)
			: await checkPublishedKeyIds(
					tokens.map((token) => token.kid),
					source.fetchKeyIds,
				)
	if (check.outcome === 'known') return { request, dropped: false }
	if (api) return check.outcome === 'keys-not-loaded' ? { notVerified: check.detail } : { refused: true }
	const unresolved = tokens.filter((token) => check.kids.has(token.kid))
	return unresolved.length === 0 ? { request, dropped: false } : pageWithout(unresolved)
}
