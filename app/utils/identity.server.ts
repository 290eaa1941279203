import { clerkClient } from './auth.server.ts'
import { withinDeadline } from './deadline.server.ts'
import { noteOncePerMinute } from './log-note.server.ts'

// Filing a deletion request waits on this; a page that only shows the address waits less.
const LOOKUP_TIMEOUT_MS = 5_000

export type PrimaryEmailResult = { status: 'ok'; email: string | null } | { status: 'unknown-user' } | { status: 'unavailable' }

/**
 * The account's primary email at the identity provider (Backend API). Answers within 5 s (or
 * `timeoutMs`): a hanging provider must not hold the visitor. `rootAuthLoader` loses the
 * primaryEmailAddress getter, so the address is found by its id.
 */
export async function primaryEmail(clerkId: string, { timeoutMs = LOOKUP_TIMEOUT_MS } = {}): Promise<PrimaryEmailResult> {
	try {
		const user = await withinDeadline(clerkClient().users.getUser(clerkId), timeoutMs, () => new Error(`no answer within ${timeoutMs} ms`))
		const primary = user.emailAddresses.find((address) => address.id === user.primaryEmailAddressId)
		return { status: 'ok', email: primary?.emailAddress ?? null }
	} catch (error) {
		const status = (error as { status?: number }).status
		if (status === 404) return { status: 'unknown-user' }
		// Refused for our key, not an outage: every lookup fails until an operator fixes the setting.
		const refusedKey = status === 401 || status === 403
		noteFailedLookup(
			clerkId,
			refusedKey ? `Clerk's Backend API refused CLERK_SECRET_KEY (${status}): check the key` : (error as Error).message,
		)
		return { status: 'unavailable' }
	}
}

/**
 * Signed-in users cause these lookups (each account page view, each deletion filing): during an
 * outage of the identity provider the log gets a note when it starts and then one a minute with a
 * count, not a line per request.
 */
const noteFailedLookup = noteOncePerMinute((count, clerkId: string, message: string) =>
	console.error(`identity: ${count} lookup(s) failed since the last note (the last, of ${clerkId}: ${message})`),
)

const EMAIL_KEPT_MS = 60_000
const EMAILS_KEPT = 1_000
const shownEmails = new Map<string, { email: string | null; until: number }>()

/**
 * The primary email for a page that shows it (the account page), kept for a minute per user: each
 * view would otherwise spend a call of the identity provider's quota, which deletion filings need
 * too. Filing never reads this: it asks the provider each time (a changed email must count at once).
 */
export async function displayedPrimaryEmail(clerkId: string, { timeoutMs }: { timeoutMs: number }): Promise<string | null> {
	const now = Date.now()
	const kept = shownEmails.get(clerkId)
	if (kept && kept.until > now) return kept.email
	const lookup = await primaryEmail(clerkId, { timeoutMs })
	if (lookup.status !== 'ok') return null
	shownEmails.delete(clerkId)
	if (shownEmails.size >= EMAILS_KEPT) shownEmails.delete(shownEmails.keys().next().value!)
	shownEmails.set(clerkId, { email: lookup.email, until: now + EMAIL_KEPT_MS })
	return lookup.email
}
