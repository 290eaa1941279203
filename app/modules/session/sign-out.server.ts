import type { AppLoadContext } from '@remix-run/node'
import type { Params } from '@remix-run/react'
import { clerkClient, pageSession } from '#app/utils/auth.server.ts'
import { env } from '#app/utils/env.server.ts'

// Signing out ends the session at the identity provider, not only in this browser: on a shared
// computer, a session merely forgotten here would come back through Clerk's handshake (its client
// cookie on Clerk's own domain still names it). So the session is revoked first, through the Backend
// API, and only then are Clerk's cookies on this host expired. It works without JavaScript.
// In production Clerk also keeps `__client_uat` on the parent domain, which this host cannot expire:
// the next page then takes one handshake round trip, in which Clerk finds the session revoked and
// writes the signed-out state itself.

/** Clerk's cookies on the app's host, suffixed variants included (`__session_<suffix>`). */
const CLERK_COOKIE = /^(?:__session|__client_uat|__refresh)(?:_[\w-]+)?$/

/** An expired copy of each of Clerk's cookies the browser sent, so the next page is signed out at once. */
function expiredClerkCookies(request: Request): string[] {
	const secure = new URL(env().APP_URL).protocol === 'https:'
	const names = (request.headers.get('Cookie') ?? '')
		.split(';')
		.map((pair) => pair.split('=', 1)[0]!.trim())
		.filter((name) => CLERK_COOKIE.test(name))
	return [...new Set(names)].map((name) => `${name}=; Path=/; Max-Age=0; SameSite=Lax${secure ? '; Secure' : ''}`)
}

export type SignOutResult = { status: 'signed-out'; setCookies: string[] } | { status: 'error' }

export async function signOut(args: { request: Request; context: AppLoadContext; params: Params }): Promise<SignOutResult> {
	const session = await pageSession(args)
	if (session) {
		try {
			await clerkClient().sessions.revokeSession(session.sessionId)
		} catch (error) {
			// The session is already over at Clerk (revoked from another tab or a double click: its token
			// still verifies here for up to a minute): nothing is left to end but this browser's cookies.
			const status = (error as { status?: unknown }).status
			if (status !== 400 && status !== 404 && status !== 410) {
				// Not signed out anywhere: the browser keeps its cookies and the user is told to try again,
				// rather than shown a signed-out page that the next visit would sign back in.
				console.error(`sign-out: revoking session ${session.sessionId} failed: ${(error as Error).message}`)
				return { status: 'error' }
			}
		}
	}
	return { status: 'signed-out', setCookies: expiredClerkCookies(args.request) }
}
