import { createClerkClient, type ClerkClient } from '@clerk/backend'
import { env } from './env.server.ts'
import { errorResponse } from './http.server.ts'
import { ensureUser, type AppUser } from './users.server.ts'

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

/**
 * The identity-provider user id of the request's session, or null. API routes use this rather than
 * @clerk/remix's getAuth, which may throw a 307 "handshake" redirect: an API client must get JSON 401.
 */
export async function sessionUserId(request: Request): Promise<string | null> {
	const config = env()
	if (!config.clerkConfigured) return null
	try {
		const state = await clerkClient().authenticateRequest(request, {
			jwtKey: config.CLERK_JWT_KEY,
			authorizedParties: [new URL(config.APP_URL).origin],
		})
		return state.isSignedIn ? state.toAuth().userId : null
	} catch (error) {
		console.error(`auth: session verification failed: ${(error as Error).message}`)
		return null
	}
}

/** For /api/* routes: the signed-in user's row (created on first use), or a thrown JSON 401. */
export async function requireApiUser(request: Request): Promise<AppUser> {
	const clerkId = await sessionUserId(request)
	if (!clerkId) throw errorResponse('unauthorized')
	return ensureUser(clerkId)
}
