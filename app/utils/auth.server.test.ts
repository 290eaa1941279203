import { beforeAll, describe, expect, test } from 'vitest'
import { createClerkTestKeys, sessionCookie } from '../../tests/mocks/clerk.ts'
import { newClerkUserId, sessionHeaders } from '../../tests/support/sessions.ts'
import { pageSession, pageUserId } from './auth.server.ts'
import { initEnv } from './env.server.ts'

const keys = createClerkTestKeys()
const appUrl = 'http://localhost:3000'

beforeAll(() => {
	initEnv({
		NODE_ENV: 'test',
		APP_URL: appUrl,
		CLERK_PUBLISHABLE_KEY: keys.publishableKey,
		CLERK_SECRET_KEY: keys.secretKey,
		CLERK_JWT_KEY: keys.jwtKeyPem,
	})
})

/** What Remix's server runtime hands each loader: its own copy of the document request. */
function loaderCopy(request: Request) {
	return new Request(request.url, { method: request.method, headers: request.headers, signal: request.signal })
}

/** One per request, as server/app-server.js builds it; Remix passes the same object to every loader. */
const requestContext = () => ({ cspNonce: 'nonce', remoteAddress: '127.0.0.1' })

describe('page session check', () => {
	test('the root loader and the page loader of one request share one verification', async () => {
		const userId = newClerkUserId()
		const document = new Request(`${appUrl}/pricing`, { headers: { ...sessionHeaders(keys, userId), Accept: 'text/html' } })
		const context = requestContext()
		const root = pageSession({ request: loaderCopy(document), context, params: {} })
		const page = pageSession({ request: loaderCopy(document), context, params: {} })
		expect(page).toBe(root)
		expect(await root).toEqual({ userId, sessionId: expect.stringMatching(/^sess_/) })
		expect(await pageUserId({ request: loaderCopy(document), context, params: {} })).toBe(userId)
	})

	test('another request is verified on its own', async () => {
		const first = new Request(`${appUrl}/account`, { headers: sessionHeaders(keys, newClerkUserId()) })
		const secondUser = newClerkUserId()
		const second = new Request(`${appUrl}/account`, { headers: sessionHeaders(keys, secondUser) })
		const one = pageUserId({ request: first, context: requestContext(), params: {} })
		const two = pageUserId({ request: second, context: requestContext(), params: {} })
		expect(two).not.toBe(one)
		expect(await two).toBe(secondUser)
	})
})

describe('an expired session on a page (no JavaScript renews it)', () => {
	const expiredCookie = (userId: string) => {
		const now = Math.floor(Date.now() / 1000)
		const token = keys.sign({ sub: userId, iat: now - 180, nbf: now - 180, exp: now - 120 })
		return sessionCookie(token, { clientUat: now - 180 })
	}
	const documentHeaders = (userId: string) => ({ Cookie: expiredCookie(userId), Accept: 'text/html', 'Sec-Fetch-Dest': 'document' })

	test("a page load gets Clerk's handshake redirect, which refreshes the session", async () => {
		const request = new Request(`${appUrl}/account`, { headers: documentHeaders(newClerkUserId()) })
		const thrown = await pageUserId({ request, context: requestContext(), params: {} }).catch((error: unknown) => error)
		expect(thrown).toBeInstanceOf(Response)
		expect((thrown as Response).status).toBe(307)
		expect((thrown as Response).headers.get('Location')).toContain('/v1/client/handshake')
	})

	test('a form post goes back to the page with GET (the handshake then happens there), not to Clerk', async () => {
		const request = new Request(`${appUrl}/account?checkout=canceled`, {
			method: 'POST',
			headers: { ...documentHeaders(newClerkUserId()), 'Content-Type': 'application/x-www-form-urlencoded' },
			body: 'intent=portal',
		})
		const thrown = await pageUserId({ request, context: requestContext(), params: {} }).catch((error: unknown) => error)
		expect(thrown).toBeInstanceOf(Response)
		expect((thrown as Response).status).toBe(303)
		expect((thrown as Response).headers.get('Location')).toBe('/account?checkout=canceled&session=refreshed')
	})
})
