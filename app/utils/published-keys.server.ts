import { withinDeadline } from './deadline.server.ts'

// Without CLERK_JWT_KEY, Clerk verifies a token with the keys its Backend API publishes, and fetches
// that list again whenever a token names a key id (`kid`) it has not cached. Anyone can write a token
// with a made-up kid: each one made a Backend API call on our secret key (with retries when it
// failed), spending the quota that sign-out and deletion filings need. Tokens are checked here first:
// a kid the list does not name is refused without asking Clerk, and the list itself is fetched again
// for an unknown kid at most every REFETCH_MS (a key Clerk has just rotated in waits that long at most).

const REFETCH_MS = 10_000
// As long as a session verification waits for the provider (auth.server.ts).
const FETCH_DEADLINE_MS = 5_000

export type KeyCheck = { outcome: 'published' } | { outcome: 'unknown-kid' } | { outcome: 'keys-not-loaded'; detail: string }

type Published = { kids: Set<string>; fetchedAt: number }
let published: Published | undefined
let fetching: Promise<Published> | undefined

/** The key id a JWT's header names, '' when it names none, or null when the text is no JWT Clerk could read (Clerk refuses those without a call). */
export function keyIdOf(token: string): string | null {
	const header = token.slice(0, token.indexOf('.'))
	if (!header) return null
	try {
		const parsed: unknown = JSON.parse(Buffer.from(header, 'base64url').toString())
		if (typeof parsed !== 'object' || parsed === null) return null
		const { kid } = parsed as { kid?: unknown }
		return typeof kid === 'string' ? kid : ''
	} catch {
		return null
	}
}

/**
 * Whether every token names a key the provider publishes. `fetchKeyIds` asks the provider for its list;
 * one fetch at a time, shared by the requests waiting for it. A failed fetch is not remembered: the
 * next token with an unknown kid tries again (one at a time), so sessions recover with the provider.
 */
export async function checkKeyIds(tokens: readonly string[], fetchKeyIds: () => Promise<string[]>): Promise<KeyCheck> {
	const kids = tokens.map(keyIdOf).filter((kid): kid is string => kid !== null)
	if (kids.every((kid) => published?.kids.has(kid))) return { outcome: 'published' }
	if (published && Date.now() - published.fetchedAt < REFETCH_MS) return { outcome: 'unknown-kid' }
	try {
		fetching ??= withinDeadline(fetchKeyIds(), FETCH_DEADLINE_MS, () => new Error(`no answer within ${FETCH_DEADLINE_MS} ms`))
			.then((list) => (published = { kids: new Set(list), fetchedAt: Date.now() }))
			.finally(() => (fetching = undefined))
		const { kids: known } = await fetching
		return kids.every((kid) => known.has(kid)) ? { outcome: 'published' } : { outcome: 'unknown-kid' }
	} catch (error) {
		return { outcome: 'keys-not-loaded', detail: (error as Error).message }
	}
}
