import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { cookieSuffix, sessionCookie } from '../mocks/clerk.ts'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { postJson } from '../support/http.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'
import { FREE_STATUS } from '../support/status-payloads.ts'

// contract.md §1: without CLERK_JWT_KEY, session tokens are verified with the keys the identity
// provider publishes (its Backend API's JWKS, at CLERK_API_URL): here the fake Backend API's
// `GET /v1/jwks`, which lists the stand-in's signing key.
let standIns: StandIns
let app: RunningApp

beforeAll(async () => {
	standIns = await startStandIns()
	const { CLERK_JWT_KEY: _networkless, ...env } = standIns.env
	app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...env })
})
afterAll(async () => {
	await app?.stop()
	await standIns?.close()
})

const jwksCalls = () => standIns.clerkApi.requests.filter((r) => r.method === 'GET' && r.path === '/v1/jwks').length
const statusWith = (headers: Record<string, string>) => fetch(`${app.url}/api/billing/status`, { headers })

describe('CLERK_JWT_KEY unset: keys from the identity provider', () => {
	test('a valid session token (cookie or Bearer) is verified with the published keys: 200 and the user’s status', async () => {
		const before = jwksCalls()
		const userId = newClerkUserId()
		const response = await statusWith(sessionHeaders(standIns.clerk, userId))
		expect(response.status).toBe(200)
		expect(await response.json()).toEqual(FREE_STATUS)
		const bearer = await statusWith({ Authorization: `Bearer ${standIns.clerk.sign({ sub: newClerkUserId() })}` })
		expect(bearer.status).toBe(200)
		expect(await bearer.json()).toEqual(FREE_STATUS)
		// The keys came from the provider this app was pointed at (CLERK_API_URL).
		expect(jwksCalls()).toBeGreaterThan(before)
	})

	test('a valid Bearer decides beside a session cookie Clerk cannot decode: 200 and the user’s status on its first request, not 401 for the cookie', async () => {
		for (const cookie of ['__session=not.a.jwt', '__session=eyJ4IjoxfQ.eyJ4IjoxfQ.x']) {
			const response = await statusWith({ Authorization: `Bearer ${standIns.clerk.sign({ sub: newClerkUserId() })}`, Cookie: cookie })
			expect(response.status, cookie).toBe(200)
			expect(await response.json(), cookie).toEqual(FREE_STATUS)
		}
	})

	test("another application's __session cookie that is no JWT of this instance's (an opaque id, JSON, a JWT naming no issuer) does not sign out a browser with this instance's suffixed session: 200 on the API, the account page signed in", async () => {
		expectServerLog(/^auth: \d+ session token\(s\) refused \(/)
		const suffix = cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)
		const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
		const noIssuer = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ uid: 'u1' })}.c2lnbmF0dXJl`
		for (const other of ['abc123', '%7B%22uid%22%3A1%7D', noIssuer]) {
			const userId = newClerkUserId()
			standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
			const uat = Math.floor(Date.now() / 1000) - 5
			const cookie = `__session=${other}; __session_${suffix}=${standIns.clerk.sign({ sub: userId })}; __client_uat_${suffix}=${uat}; __client_uat=${uat}`
			const api = await statusWith({ Cookie: cookie })
			expect(api.status, other).toBe(200)
			expect(await api.json(), other).toEqual(FREE_STATUS)
			const page = await fetch(`${app.url}/account`, { headers: { Cookie: cookie, Accept: 'text/html' }, redirect: 'manual' })
			expect(page.status, other).toBe(200)
			expect(await page.text(), other).toContain('>Sign out</button>')
		}
	})

	test('forged tokens are 401 unauthorized JSON', async () => {
		expectServerLog(/^auth: \d+ session token\(s\) refused \(/)
		const victim = newClerkUserId()
		const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
		const genuine = standIns.clerk.sign({ sub: victim })
		const [header, , signature] = genuine.split('.')
		const claims = { ...JSON.parse(Buffer.from(genuine.split('.')[1]!, 'base64url').toString()), sub: 'user_admin' }
		const forgeries: Array<[string, string]> = [
			['signed with another key under the published kid', standIns.clerk.sign({ sub: victim }, { privateKey: otherKey })],
			[
				'signed with another key under a kid the provider does not publish',
				standIns.clerk.sign({ sub: victim }, { privateKey: otherKey, kid: 'ins_forged' }),
			],
			['a genuine signature over a changed payload', `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`],
			['alg none', standIns.clerk.sign({ sub: victim }, { alg: 'none' })],
			['HS256 keyed with the public key', standIns.clerk.sign({ sub: victim }, { alg: 'HS256' })],
		]
		for (const [label, token] of forgeries) {
			for (const headers of [{ Cookie: sessionCookie(token) }, { Authorization: `Bearer ${token}` }] as Array<Record<string, string>>) {
				const response = await statusWith(headers)
				expect(response.status, label).toBe(401)
				expect(await response.json(), label).toEqual({ error: expect.any(String), code: 'unauthorized' })
			}
		}
		// The genuine token still works: the refusals were about the forgeries, not the keys.
		expect((await statusWith({ Cookie: sessionCookie(genuine) })).status).toBe(200)
	})

	test('made-up key ids cost at most one fetch of the key list in ten seconds, on the API and on pages; the genuine token still works', async () => {
		expectServerLog(/^auth: \d+ session token\(s\) refused \(/)
		const userId = newClerkUserId()
		const genuine = standIns.clerk.sign({ sub: userId })
		const madeUp = () => standIns.clerk.sign({ sub: userId }, { kid: `ins_made_up_${randomUUID()}` })
		const before = jwksCalls()
		for (let i = 0; i < 10; i++) {
			const bearer = await statusWith({ Authorization: `Bearer ${madeUp()}` })
			expect(bearer.status).toBe(401)
			expect(await bearer.json()).toEqual({ error: expect.any(String), code: 'unauthorized' })
			expect((await statusWith({ Cookie: sessionCookie(madeUp()) })).status).toBe(401)
			// A page is signed out: the account page sends the visitor to sign in.
			const page = await fetch(`${app.url}/account`, { headers: { Cookie: sessionCookie(madeUp()) }, redirect: 'manual' })
			expect(page.status).toBe(303)
			expect(page.headers.get('location')).toMatch(/^\/sign-in\?/)
		}
		expect(jwksCalls() - before).toBeLessThanOrEqual(1)
		expect((await statusWith({ Cookie: sessionCookie(genuine) })).status).toBe(200)
		expect((await statusWith({ Authorization: `Bearer ${genuine}` })).status).toBe(200)
	})

	test('made-up key ids in the places Clerk reads tokens that a plain Bearer check misses, and in cookies behind a refused Authorization: no fetch either', async () => {
		expectServerLog(/^auth: \d+ session token\(s\) refused \(/)
		const userId = newClerkUserId()
		const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
		const [, payload, signature] = standIns.clerk.sign({ sub: userId }).split('.')
		// Headers Clerk's decoder reads that a stricter one would not: a byte-order mark before the JSON,
		// and a header that is no object (Clerk then looks for an undefined key id).
		const bom = `${Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ alg: 'RS256', kid: `ins_${randomUUID()}` }))]).toString('base64url')}.${payload}.${signature}`
		const notAnObject = `${b64(1)}.${payload}.${signature}`
		const madeUp = () => standIns.clerk.sign({ sub: userId }, { kid: `ins_made_up_${randomUUID()}` })
		const before = jwksCalls()
		for (let i = 0; i < 5; i++) {
			for (const headers of [
				{ Authorization: `Bearer ${bom}` },
				{ Cookie: sessionCookie(notAnObject) },
				{ Authorization: `Bearer ${notAnObject}` },
			] as Array<Record<string, string>>) {
				expect((await statusWith(headers)).status).toBe(401)
			}
			// Pages: Clerk reads a bare Authorization value as the token, and Bearer's up to the next space.
			for (const authorization of [madeUp(), `Bearer ${madeUp()} x`, `Bearer ${bom}`]) {
				const page = await fetch(`${app.url}/pricing`, { headers: { Authorization: authorization }, redirect: 'manual' })
				expect(page.status).toBe(200)
				await page.body?.cancel()
			}
			// Left without its Authorization token, a page request is read from its cookies: those are checked too.
			const both = await fetch(`${app.url}/pricing`, {
				headers: { Authorization: madeUp(), Cookie: sessionCookie(madeUp()) },
				redirect: 'manual',
			})
			expect(both.status).toBe(200)
			await both.body?.cancel()
		}
		expect(jwksCalls() - before).toBeLessThanOrEqual(1)
	})

	describe("another Clerk instance's unsuffixed session cookie (two apps on one host), signed with a key of its own", () => {
		// The identity SDK names this instance's cookies with a suffix, and leaves an unsuffixed __session
		// issued elsewhere alone.
		const suffix = () => cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)
		const foreign = () =>
			standIns.clerk.sign(
				{ sub: newClerkUserId(), iss: 'https://other-app.clerk.accounts.dev' },
				{ privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, kid: `ins_other_${randomUUID()}` },
			)

		test("beside this instance's session: signed in, on the API and on a page", async () => {
			expectServerLog(/^auth: \d+ session token\(s\) refused \(/)
			const userId = newClerkUserId()
			standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
			const ours = standIns.clerk.sign({ sub: userId })
			const iat = Math.floor(Date.now() / 1000) - 5
			const cookie = `__session_${suffix()}=${ours}; __client_uat_${suffix()}=${iat}; __session=${foreign()}; __client_uat=${iat}`
			const api = await statusWith({ Cookie: cookie })
			expect(api.status).toBe(200)
			expect(await api.json()).toEqual(FREE_STATUS)
			const page = await fetch(`${app.url}/account`, { headers: { Cookie: cookie, Accept: 'text/html' }, redirect: 'manual' })
			expect(page.status).toBe(200)
			await page.body?.cancel()
		})

		test("an unsuffixed __session that is no token at all (another application's cookie) beside this instance's session: signed in, on the API and on a page", async () => {
			const userId = newClerkUserId()
			standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
			const iat = Math.floor(Date.now() / 1000) - 5
			for (const other of ['not.a.jwt', 'eyJ4IjoxfQ.eyJ4IjoxfQ.x']) {
				const cookie = `__session_${suffix()}=${standIns.clerk.sign({ sub: userId })}; __client_uat_${suffix()}=${iat}; __session=${other}`
				const api = await statusWith({ Cookie: cookie })
				expect(api.status, other).toBe(200)
				expect(await api.json(), other).toEqual(FREE_STATUS)
				const page = await fetch(`${app.url}/account`, { headers: { Cookie: cookie, Accept: 'text/html' }, redirect: 'manual' })
				expect(page.status, other).toBe(200)
				expect(await page.text(), other).toContain(`Signed in as<!-- --> <strong>${userId}<span>`)
			}
		})

		test('alone, this instance signed out: the page is shown signed out, as the identity SDK decides, with no handshake', async () => {
			const iat = Math.floor(Date.now() / 1000) - 5
			const cookie = `__session=${foreign()}; __client_uat=${iat}; __client_uat_${suffix()}=0`
			const before = standIns.clerkApi.requests.length
			const page = await fetch(`${app.url}/pricing`, {
				headers: { Cookie: cookie, Accept: 'text/html', 'Sec-Fetch-Dest': 'document' },
				redirect: 'manual',
			})
			expect(page.status).toBe(200)
			await page.body?.cancel()
			expect(standIns.clerkApi.requests.slice(before)).toEqual([])
		})
	})

	test('a page verifies the session the same way: /account shows who is signed in', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
		const response = await fetch(`${app.url}/account`, {
			headers: { Accept: 'text/html', ...sessionHeaders(standIns.clerk, userId) },
			redirect: 'manual',
		})
		expect(response.status).toBe(200)
		expect(await response.text()).toContain(
			`Signed in as<!-- --> <strong>${userId}<span><wbr/>@example</span><span><wbr/>.com</span></strong>`,
		)
	})
})

describe('CLERK_JWT_KEY unset, while the identity provider cannot hand over its keys', () => {
	test('a valid session is not taken for a signed-out one: the status API answers its fallback, writes 503, and all recover with the provider', async () => {
		expectServerLog(/^auth: \d+ session token\(s\) refused \(jwk-kid-mismatch\)/)
		expectServerLog(/^auth: \d+ session token\(s\) not verified \(jwk-remote-failed-to-load: .+\) since the last note; each answered 503/)
		// A second instance, started during the outage: it has no keys cached yet.
		const { CLERK_JWT_KEY: _networkless, ...env } = standIns.env
		const cold = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...env })
		try {
			const userId = newClerkUserId()
			standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
			const headers = sessionHeaders(standIns.clerk, userId)
			// Each answer within the client's own patience: a provider that never answers must not hold it.
			const call = (path: string, body?: unknown) =>
				fetch(`${cold.url}${path}`, {
					method: body === undefined ? 'GET' : 'POST',
					headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
					body: body === undefined ? undefined : JSON.stringify(body),
					signal: AbortSignal.timeout(20_000),
				})
			// Made-up key ids during the outage: a failed fetch of the list is not tried again for 2 s, so
			// they cannot turn it into a Backend API call each.
			standIns.clerkApi.setMode('error500')
			const before = jwksCalls()
			for (let i = 0; i < 10; i++) {
				const madeUp = standIns.clerk.sign({ sub: userId }, { kid: `ins_made_up_${i}` })
				const refused = await postJson(`${cold.url}/api/billing/checkout`, { plan: 'solo' }, { Authorization: `Bearer ${madeUp}` })
				expect(refused.status).toBe(503)
			}
			expect(jwksCalls() - before).toBeLessThanOrEqual(2)
			for (const mode of ['error500', 'hang'] as const) {
				standIns.clerkApi.setMode(mode)
				const status = await call('/api/billing/status')
				expect(status.status, mode).toBe(200)
				expect(await status.json(), mode).toEqual(FREE_STATUS)
				for (const [path, body] of [
					['/api/billing/checkout', { plan: 'solo' }],
					['/api/account/delete-request', { confirmEmail: `${userId}@example.com` }],
				] as const) {
					const refused = await call(path, body)
					expect(refused.status, `${mode} ${path}`).toBe(503)
					expect(await refused.json(), `${mode} ${path}`).toEqual({ error: expect.any(String), code: 'identity-provider-unavailable' })
				}
			}
			// During the outage a failed fetch of the key list is tried again after 2 s at the soonest (a
			// client cannot turn an outage into a call per request): the provider back, sessions follow within that.
			standIns.clerkApi.setMode('ok')
			const recoveredAt = Date.now()
			let checkout = await call('/api/billing/checkout', { plan: 'solo' })
			while (checkout.status === 503 && Date.now() - recoveredAt < 5_000) {
				await new Promise((resolve) => setTimeout(resolve, 250))
				checkout = await call('/api/billing/checkout', { plan: 'solo' })
			}
			expect(checkout.status).toBe(200)
			expect(await checkout.json()).toEqual({ url: expect.any(String) })
			// A token the provider does not vouch for is still 401 once its keys are in.
			const forged = await fetch(`${cold.url}/api/billing/status`, {
				headers: { Authorization: `Bearer ${standIns.clerk.sign({ sub: userId }, { kid: 'ins_unpublished' })}` },
			})
			expect(forged.status).toBe(401)
		} finally {
			standIns.clerkApi.setMode('ok')
			await cold.stop()
		}
	}, 90_000)
})
