import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { postForm, postJson } from '../support/http.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

// contract.md §1: with CLERK_PUBLISHABLE_KEY / CLERK_SECRET_KEY unset, signed-in endpoints answer 401
// and pages say sign-in is not configured. The rest of the stand-ins' environment stays, CLERK_JWT_KEY
// included: a token that would otherwise be valid must still not sign anyone in.
let standIns: StandIns
let app: RunningApp

beforeAll(async () => {
	standIns = await startStandIns()
	const { CLERK_PUBLISHABLE_KEY: _publishable, CLERK_SECRET_KEY: _secret, ...env } = standIns.env
	app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...env })
})
afterAll(async () => {
	await app?.stop()
	await standIns?.close()
})

const NOT_CONFIGURED = 'Signing in is not available right now.'
const page = (path: string, headers: Record<string, string> = {}) =>
	fetch(`${app.url}${path}`, { headers: { Accept: 'text/html', ...headers }, redirect: 'manual' })

describe('identity provider keys unset', () => {
	test('start-up says sign-in is off', () => {
		expect(app.output()).toContain('warning: CLERK_PUBLISHABLE_KEY and CLERK_SECRET_KEY not set: sign-in is off')
	})

	test('/sign-in answers 200 and says sign-in is not configured', async () => {
		for (const path of ['/sign-in', '/sign-in?redirect_url=%2Faccount', '/sign-in/factor-one']) {
			const response = await page(path)
			expect(response.status, path).toBe(200)
			expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
			const html = await response.text()
			expect(html, path).toContain(NOT_CONFIGURED)
			expect(html, path).not.toContain('Signing in needs JavaScript')
		}
	})

	test('/pricing says so before a plan is chosen, and offers no sign-in that cannot happen; /sign-in from it promises no trial', async () => {
		for (const headers of [{}, sessionHeaders(standIns.clerk, newClerkUserId())]) {
			const response = await page('/pricing', headers)
			expect(response.status).toBe(200)
			const html = await response.text()
			expect(html).toContain('Signing in is not available right now, so plans cannot be started here.')
			// Not told to turn JavaScript on, to sign in first, or to start a trial.
			expect(html).not.toContain('Signing in needs JavaScript')
			expect(html).not.toContain('choosing a plan asks you to sign in')
			expect(html).not.toContain('value="checkout"')
			expect(html).not.toContain('Start free trial')
			expect(html.match(/Not available right now\./g)).toHaveLength(6)
		}
		const signIn = await page('/sign-in?redirect_url=%2Fpricing%3Finterval%3Dmonth')
		expect(signIn.status).toBe(200)
		const html = await signIn.text()
		expect(html).toContain(NOT_CONFIGURED)
		expect(html).not.toContain('free trial')
	})

	test('/account, even with a session cookie, sends the visitor to /sign-in, which says why', async () => {
		const userId = newClerkUserId()
		for (const headers of [{}, sessionHeaders(standIns.clerk, userId)]) {
			const response = await page('/account', headers)
			expect(response.status).toBe(303)
			const location = response.headers.get('location')!
			expect(location).toBe('/sign-in?redirect_url=%2Faccount')
			const signIn = await page(location, headers)
			expect(signIn.status).toBe(200)
			expect(await signIn.text()).toContain(NOT_CONFIGURED)
		}
	})

	test('the public pages still render for a visitor', async () => {
		for (const path of ['/', '/pricing', '/contact']) {
			const response = await page(path, sessionHeaders(standIns.clerk, newClerkUserId()))
			expect(response.status, path).toBe(200)
			expect(await response.text(), path).toContain('href="/sign-in"')
		}
	})

	test.each([
		['GET', '/api/billing/status'],
		['POST', '/api/billing/checkout'],
		['POST', '/api/billing/portal'],
		['POST', '/api/account/delete-request'],
	])('%s %s → 401 unauthorized JSON, even with a token signed by the provider’s key', async (method, path) => {
		const calls = standIns.clerkApi.requests.length
		const userId = newClerkUserId()
		const headers = [{}, sessionHeaders(standIns.clerk, userId), { Authorization: `Bearer ${standIns.clerk.sign({ sub: userId })}` }]
		for (const auth of headers) {
			const response =
				method === 'GET'
					? await fetch(`${app.url}${path}`, { headers: auth })
					: await postJson(`${app.url}${path}`, { plan: 'team', confirmEmail: 'a@example.com' }, auth)
			expect(response.status).toBe(401)
			expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
			expect(response.headers.get('www-authenticate')).toBe('Bearer')
			expect(await response.json()).toEqual({ error: expect.any(String), code: 'unauthorized' })
		}
		expect(standIns.clerkApi.requests.length).toBe(calls)
	})

	test('a plan button on /pricing does not open a checkout: it goes to /sign-in', async () => {
		const checkouts = standIns.stripe.store.all('checkout.session').length
		const response = await postForm(
			`${app.url}/pricing?interval=month`,
			{ intent: 'checkout', plan: 'team', interval: 'month' },
			{ ...sessionHeaders(standIns.clerk, newClerkUserId()), Origin: app.url },
		)
		expect(response.status).toBe(303)
		expect(response.headers.get('location')).toMatch(/^\/sign-in\?redirect_url=/)
		expect(standIns.stripe.store.all('checkout.session')).toHaveLength(checkouts)
	})
})
