import { generateKeyPairSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { sessionCookie } from '../mocks/clerk.ts'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
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

	test('a page verifies the session the same way: /account shows who is signed in', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
		const response = await fetch(`${app.url}/account`, {
			headers: { Accept: 'text/html', ...sessionHeaders(standIns.clerk, userId) },
			redirect: 'manual',
		})
		expect(response.status).toBe(200)
		expect(await response.text()).toMatch(new RegExp(`Signed in as(<!-- -->)? <strong>${userId}<wbr/>@example\\.com</strong>`))
	})
})
