import { generateKeyPairSync } from 'node:crypto'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { cookieSuffix, sessionCookie } from '../mocks/clerk.ts'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { postJson } from '../support/http.ts'
import { projectRoot } from '../support/project.ts'
import { newClerkUserId } from '../support/sessions.ts'
import { FREE_STATUS } from '../support/status-payloads.ts'

// Without CLERK_JWT_KEY, two copies of the provider's key list age in the server: Clerk's, which it
// empties and fetches again after 5 minutes, and ours (token-key-ids.server.ts), which answers for the
// key ids Clerk may be shown and is fetched again after 4. What each does when its copy is old and the
// provider does not answer decides how many Backend API calls an outage costs. Minutes pass here by
// stepping the server's wall clock ahead (SIGUSR2); session tokens stay valid for 10 minutes.

const steppedClock = path.join(projectRoot, 'tests', 'support', 'stepped-clock.cjs')
let standIns: StandIns

beforeAll(async () => {
	standIns = await startStandIns()
})
afterAll(async () => {
	await standIns?.close()
})

const jwksCalls = () => standIns.clerkApi.requests.filter((r) => r.method === 'GET' && r.path === '/v1/jwks').length

/** A server whose clock each `stepAhead()` moves on by `stepSeconds`. */
async function agingApp(stepSeconds: number) {
	const { CLERK_JWT_KEY: _networkless, ...env } = standIns.env
	const app = await startApp(
		{ DATABASE_URL: await freshDatabaseUrl(), ...env, TEST_CLOCK_STEP_S: String(stepSeconds) },
		{ nodeArgs: ['--require', steppedClock] },
	)
	let steps = 0
	const stepAhead = async () => {
		steps++
		app.process.kill('SIGUSR2')
		const said = `test clock: stepped ahead to ${steps * stepSeconds} s`
		await until(() => app.output().includes(said), 5_000, said)
	}
	/** A checkout by a new user with a new token: nothing cached for it, nothing held back by a limit. */
	const checkout = async () => {
		const userId = newClerkUserId()
		const token = standIns.clerk.sign({ sub: userId })
		const response = await postJson(`${app.url}/api/billing/checkout`, { plan: 'solo' }, { Authorization: `Bearer ${token}` })
		return { status: response.status, body: (await response.json()) as unknown }
	}
	return { app, stepAhead, checkout }
}

const unavailable = { status: 503, body: { error: expect.any(String), code: 'identity-provider-unavailable' } }
const opened = { status: 200, body: { url: expect.any(String) } }

describe('CLERK_JWT_KEY unset, as the key lists age (the server’s clock stepped ahead)', () => {
	test('our list, over 4 minutes old, answers for its keys while it is fetched again; once that fetch fails, sessions wait for the provider (503), and come back with it', async () => {
		expectServerLog(/^auth: \d+ session token\(s\) not verified \(jwk-remote-failed-to-load: .+\) since the last note; each answered 503/)
		const { app, stepAhead, checkout } = await agingApp(250)
		try {
			const before = jwksCalls()
			expect(await checkout()).toEqual(opened) // both lists fetched: ours, then Clerk's
			expect(jwksCalls() - before).toBe(2)
			// 250 s on: ours is old, Clerk's (5 minutes) still serves it. The provider fails from here.
			await stepAhead()
			standIns.clerkApi.setMode('error500')
			expect(await checkout()).toEqual(opened) // still answered for, while ours is fetched again
			await until(() => jwksCalls() - before === 3, 5_000, 'our list fetched again')
			// That fetch failed: Clerk's copy is about as old, and would soon fetch for every token.
			expect(await checkout()).toEqual(unavailable)
			expect(await checkout()).toEqual(unavailable)
			expect(jwksCalls() - before).toBeLessThanOrEqual(4) // ours, tried again after 2 s at the soonest
			// The provider back: within our list's 2 s retry, sessions are verified again, Clerk's copy untouched.
			standIns.clerkApi.setMode('ok')
			let result = await checkout()
			const backAt = Date.now()
			while (result.status === 503 && Date.now() - backAt < 5_000) {
				await new Promise((resolve) => setTimeout(resolve, 250))
				result = await checkout()
			}
			expect(result).toEqual(opened)
		} finally {
			standIns.clerkApi.setMode('ok')
			await app.stop()
		}
	}, 60_000)

	for (const mode of ['error500', 'hang'] as const) {
		test(`Clerk's copy expired, ours young, the provider ${mode === 'hang' ? 'not answering' : 'failing'}: after Clerk's first failed fetch, sessions wait (503) with no fetch of Clerk's per token`, async () => {
			expectServerLog(/^auth: \d+ session token\(s\) not verified \(.+\) since the last note; each answered 503/)
			expectServerLog(/^auth: \d+ session token\(s\) refused \(jwk-kid-mismatch\)/)
			const { app, stepAhead, checkout } = await agingApp(155)
			try {
				expect(await checkout()).toEqual(opened) // both lists fetched
				// 155 s on, a token with a made-up key id has ours fetched again (Clerk's is not).
				await stepAhead()
				const madeUp = standIns.clerk.sign({ sub: newClerkUserId() }, { kid: 'ins_made_up_for_a_fetch' })
				const refused = await postJson(`${app.url}/api/billing/checkout`, { plan: 'solo' }, { Authorization: `Bearer ${madeUp}` })
				expect(refused.status).toBe(401)
				// 310 s on: Clerk's copy (fetched at 0) has expired; ours (fetched at 155) names the key.
				await stepAhead()
				standIns.clerkApi.setMode(mode)
				const before = jwksCalls()
				// The first token: Clerk fetches, with its own retries (five tries) or until our 5 s deadline.
				expect(await checkout()).toEqual(unavailable)
				const clerksFirst = jwksCalls() - before
				expect(clerksFirst).toBeGreaterThanOrEqual(1)
				for (let i = 0; i < 6; i++) expect(await checkout()).toEqual(unavailable)
				// The next six: only ours, one at a time and 2 s after a failure at the soonest.
				expect(jwksCalls() - before - clerksFirst).toBeLessThanOrEqual(2)
			} finally {
				standIns.clerkApi.setMode('ok')
				await app.stop()
			}
		}, 90_000)
	}

	test('a valid Bearer decides beside a made-up session cookie while the provider fails: one verified before keeps its answers, a new one the status fallback and 503 (never 401); the cookie alone, 401 when unreadable, else the same 503', async () => {
		expectServerLog(/^auth: \d+ session token\(s\) not verified \(jwk-remote-failed-to-load: .+\) since the last note; each answered 503/)
		expectServerLog(/^auth: \d+ session token\(s\) refused \(token-unreadable/)
		const { app, stepAhead, checkout } = await agingApp(250)
		try {
			const call = (path: '/api/billing/status' | '/api/billing/checkout', headers: Record<string, string>) =>
				path === '/api/billing/status'
					? fetch(`${app.url}${path}`, { headers, signal: AbortSignal.timeout(20_000) })
					: postJson(`${app.url}${path}`, { plan: 'solo' }, headers)
			const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
			const suffix = cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)
			const iat = Math.floor(Date.now() / 1000) - 5
			const madeUpCookies: Array<[string, string]> = [
				['an unreadable __session', '__session=not.a.jwt'],
				[
					'a suffixed __session signed with another key under a made-up key id',
					`__session_${suffix}=${standIns.clerk.sign({ sub: newClerkUserId() }, { privateKey: otherKey, kid: 'ins_made_up_cookie' })}; __client_uat_${suffix}=${iat}`,
				],
				[
					'a __session signed with another key under the published key id',
					sessionCookie(standIns.clerk.sign({ sub: newClerkUserId() }, { privateKey: otherKey })),
				],
			]
			const unavailableJson = { error: expect.any(String), code: 'identity-provider-unavailable' }
			// Before the outage: a client's Bearer is verified (both lists fetched, the session remembered).
			const verifiedBefore = `Bearer ${standIns.clerk.sign({ sub: newClerkUserId() })}`
			expect((await call('/api/billing/status', { Authorization: verifiedBefore })).status).toBe(200)
			// 250 s on, the provider failing: our list is old, and its fetch fails (as in the first test).
			await stepAhead()
			standIns.clerkApi.setMode('error500')
			const before = jwksCalls()
			expect(await checkout()).toEqual(opened)
			await until(() => jwksCalls() - before === 1, 5_000, 'our list fetched again')
			const neverVerified = `Bearer ${standIns.clerk.sign({ sub: newClerkUserId() })}`
			for (const [label, cookie] of madeUpCookies) {
				// A Bearer not verified before cannot be now: the status API's fallback, a write's 503, not a 401 for the cookie.
				const status = await call('/api/billing/status', { Authorization: neverVerified, Cookie: cookie })
				expect(status.status, label).toBe(200)
				expect(status.headers.get('cache-control'), label).toBe('no-store')
				expect(await status.json(), label).toEqual(FREE_STATUS)
				const write = await call('/api/billing/checkout', { Authorization: neverVerified, Cookie: cookie })
				expect(write.status, label).toBe(503)
				expect(await write.json(), label).toEqual(unavailableJson)
				// The one verified before still opens a checkout: a 503 here would be the outage, a 401 the cookie.
				const remembered = await call('/api/billing/checkout', { Authorization: verifiedBefore, Cookie: cookie })
				expect(remembered.status, label).toBe(200)
				expect(await remembered.json(), label).toEqual({ url: expect.any(String) })
			}
			// The cookie alone: an unreadable one is 401 at once (no key makes it a session); a signed one waits for the provider like any token.
			for (const [label, cookie] of madeUpCookies) {
				const unreadable = cookie === '__session=not.a.jwt'
				const status = await call('/api/billing/status', { Cookie: cookie })
				expect(status.status, label).toBe(unreadable ? 401 : 200)
				expect(await status.json(), label).toEqual(unreadable ? { error: expect.any(String), code: 'unauthorized' } : FREE_STATUS)
				const write = await call('/api/billing/checkout', { Cookie: cookie })
				expect(write.status, label).toBe(unreadable ? 401 : 503)
				expect(await write.json(), label).toEqual(unreadable ? { error: expect.any(String), code: 'unauthorized' } : unavailableJson)
			}
		} finally {
			standIns.clerkApi.setMode('ok')
			await app.stop()
		}
	}, 90_000)

	test('Clerk’s copy expired, ours young, the provider failing: a valid Bearer beside an unreadable __session cookie waits for the provider (503), not 401 for the cookie', async () => {
		expectServerLog(/^auth: \d+ session token\(s\) not verified \(.+\) since the last note; each answered 503/)
		expectServerLog(/^auth: \d+ session token\(s\) refused \(/)
		const { app, stepAhead, checkout } = await agingApp(155)
		try {
			expect(await checkout()).toEqual(opened) // both lists fetched
			await stepAhead()
			const madeUp = standIns.clerk.sign({ sub: newClerkUserId() }, { kid: 'ins_made_up_for_a_fetch' })
			expect((await postJson(`${app.url}/api/billing/checkout`, { plan: 'solo' }, { Authorization: `Bearer ${madeUp}` })).status).toBe(401)
			await stepAhead()
			standIns.clerkApi.setMode('error500')
			const bearer = `Bearer ${standIns.clerk.sign({ sub: newClerkUserId() })}`
			const response = await postJson(
				`${app.url}/api/billing/checkout`,
				{ plan: 'solo' },
				{ Authorization: bearer, Cookie: '__session=not.a.jwt' },
			)
			expect(response.status).toBe(503)
			expect(await response.json()).toEqual(unavailable.body)
		} finally {
			standIns.clerkApi.setMode('ok')
			await app.stop()
		}
	}, 90_000)
})
