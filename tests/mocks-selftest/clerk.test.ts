import { createClerkClient } from '@clerk/backend'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createClerkTestKeys, sessionCookie, startFakeClerkApi, type FakeClerkApi } from '../mocks/clerk.js'
import { until } from '../support/deadline.js'

const keys = createClerkTestKeys()
let api: FakeClerkApi

beforeAll(async () => {
	api = await startFakeClerkApi({ secretKey: keys.secretKey, jwks: [keys.publicJwk] })
	api.setUser({ id: 'user_alice', email: 'alice@example.test', extraEmails: ['a2@example.test'] })
})
afterAll(() => api.close())

function client(jwtKey: string | undefined = keys.jwtKeyPem) {
	return createClerkClient({
		secretKey: keys.secretKey,
		publishableKey: keys.publishableKey,
		apiUrl: api.url,
		jwtKey,
	})
}

function authenticate(cookie: string, jwtKey: string | undefined = keys.jwtKeyPem) {
	const request = new Request('http://localhost:3000/api/x', { headers: { cookie } })
	return client(jwtKey).authenticateRequest(request, { jwtKey })
}

describe('session tokens', () => {
	test('a fresh token signs the user in without touching the API', async () => {
		const before = api.requests.length
		const state = await authenticate(sessionCookie(keys.sign({ sub: 'user_alice' })))
		expect(state.isSignedIn).toBe(true)
		expect(state.toAuth()?.userId).toBe('user_alice')
		expect(api.requests.length).toBe(before)
	})

	test('Bearer tokens work too', async () => {
		const request = new Request('http://localhost:3000/api/x', {
			headers: { authorization: `Bearer ${keys.sign({ sub: 'user_alice' })}` },
		})
		const state = await client().authenticateRequest(request, { jwtKey: keys.jwtKeyPem })
		expect(state.isSignedIn).toBe(true)
	})

	const now = () => Math.floor(Date.now() / 1000)
	test.each([
		['expired', () => keys.sign({ sub: 'user_alice', exp: now() - 60 }), /expired/],
		['missing sub', () => keys.sign({ sub: undefined }), /token-verification-failed/],
		['alg none', () => keys.sign({ sub: 'user_alice' }, { alg: 'none' }), /token-invalid-algorithm/],
		['HS256 keyed with the public key', () => keys.sign({ sub: 'user_alice' }, { alg: 'HS256' }), /token-invalid-algorithm/],
		[
			'another key, same kid',
			() => keys.sign({ sub: 'user_alice' }, { privateKey: createClerkTestKeys().privateKey }),
			/token-invalid-signature/,
		],
		['future nbf', () => keys.sign({ sub: 'user_alice', nbf: now() + 600 }), /nbf/],
		// A foreign issuer is not treated as a Clerk session token at all.
		['foreign iss', () => keys.sign({ sub: 'user_alice', iss: 'https://evil.test' }), /session-token-and-uat-missing/],
	])('%s → signed out', async (_name, mint, reason) => {
		const state = await authenticate(sessionCookie(mint()))
		expect(state.isSignedIn).toBe(false)
		expect(state.reason).toMatch(reason)
	})

	test('iss and kid may be absent when jwtKey is given', async () => {
		const token = keys.sign({ sub: 'user_alice', iss: undefined }, { kid: undefined })
		expect((await authenticate(sessionCookie(token))).isSignedIn).toBe(true)
	})

	test('__session without __client_uat is ignored', async () => {
		const state = await authenticate(`__session=${keys.sign({ sub: 'user_alice' })}`)
		expect(state.isSignedIn).toBe(false)
	})

	test('without jwtKey the SDK fetches /v1/jwks from the fake', async () => {
		const fresh = createClerkTestKeys()
		const jwksApi = await startFakeClerkApi({ secretKey: keys.secretKey, jwks: [fresh.publicJwk] })
		try {
			const request = new Request('http://localhost:3000/api/x', {
				headers: { cookie: sessionCookie(fresh.sign({ sub: 'user_bob' })) },
			})
			const sdk = createClerkClient({
				secretKey: keys.secretKey,
				publishableKey: fresh.publishableKey,
				apiUrl: jwksApi.url,
			})
			const state = await sdk.authenticateRequest(request)
			expect(state.toAuth()?.userId).toBe('user_bob')
			expect(jwksApi.requests).toContainEqual({ method: 'GET', path: '/v1/jwks' })
		} finally {
			await jwksApi.close()
		}
	})
})

describe('Backend API', () => {
	test('getUser builds a User with a primary email, listed after the older address', async () => {
		const user = await client().users.getUser('user_alice')
		expect(user.id).toBe('user_alice')
		expect(user.primaryEmailAddress?.emailAddress).toBe('alice@example.test')
		expect(user.emailAddresses.map((e) => e.emailAddress)).toEqual(['a2@example.test', 'alice@example.test'])
		expect(api.requests.at(-1)).toEqual({ method: 'GET', path: '/v1/users/user_alice' })
	})

	test('unknown id throws with status 404', async () => {
		await expect(client().users.getUser('user_nobody')).rejects.toMatchObject({ status: 404 })
	})

	test('wrong secret key → 401', async () => {
		const sdk = createClerkClient({ secretKey: 'sk_live_wrong', apiUrl: api.url })
		await expect(sdk.users.getUser('user_alice')).rejects.toMatchObject({ status: 401 })
	})

	test('error500 mode → status 500; hang mode is cut by close()', async () => {
		const local = await startFakeClerkApi({ secretKey: keys.secretKey })
		const sdk = createClerkClient({ secretKey: keys.secretKey, apiUrl: local.url })
		local.setMode('error500')
		await expect(sdk.users.getUser('x')).rejects.toMatchObject({ status: 500 })
		local.setMode('hang')
		// The SDK sets no timeout of its own: only close() cutting the request can end the call.
		const pending = sdk.users.getUser('x').catch((e: unknown) => e)
		const before = local.requests.length
		try {
			await until(() => local.requests.length > before, 5000, 'the fake received the request')
		} finally {
			await local.close()
		}
		expect(local.requests.at(-1)).toEqual({ method: 'GET', path: '/v1/users/x' })
		expect(await pending).toBeInstanceOf(Error)
	})
})
