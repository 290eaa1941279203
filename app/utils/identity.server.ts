import { clerkClient } from './auth.server.ts'

// Filing a deletion request waits on this; a page that only shows the address waits less.
const LOOKUP_TIMEOUT_MS = 5_000

export type PrimaryEmailResult = { status: 'ok'; email: string | null } | { status: 'unknown-user' } | { status: 'unavailable' }

/**
 * The account's primary email at the identity provider (Backend API). Answers within 5 s (or
 * `timeoutMs`): a hanging provider must not hold the visitor. `rootAuthLoader` loses the
 * primaryEmailAddress getter, so the address is found by its id.
 */
export async function primaryEmail(clerkId: string, { timeoutMs = LOOKUP_TIMEOUT_MS } = {}): Promise<PrimaryEmailResult> {
	let timer: NodeJS.Timeout | undefined
	try {
		const timeout = new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
		})
		const user = await Promise.race([clerkClient().users.getUser(clerkId), timeout])
		const primary = user.emailAddresses.find((address) => address.id === user.primaryEmailAddressId)
		return { status: 'ok', email: primary?.emailAddress ?? null }
	} catch (error) {
		if ((error as { status?: number }).status === 404) return { status: 'unknown-user' }
		console.error(`identity: looking up ${clerkId} failed: ${(error as Error).message}`)
		return { status: 'unavailable' }
	} finally {
		clearTimeout(timer)
	}
}
