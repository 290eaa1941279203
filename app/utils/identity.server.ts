import { clerkClient } from './auth.server.ts'

const LOOKUP_TIMEOUT_MS = 5_000

export type PrimaryEmailResult = { status: 'ok'; email: string | null } | { status: 'unknown-user' } | { status: 'unavailable' }

/**
 * The account's primary email at the identity provider (Backend API). Answers within 5 s: a hanging
 * provider must not hold the visitor. `rootAuthLoader` loses the primaryEmailAddress getter, so the
 * address is found by its id.
 */
export async function primaryEmail(clerkId: string): Promise<PrimaryEmailResult> {
	let timer: NodeJS.Timeout | undefined
	try {
		const timeout = new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`no answer within ${LOOKUP_TIMEOUT_MS} ms`)), LOOKUP_TIMEOUT_MS)
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
