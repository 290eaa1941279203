import { execFile } from 'node:child_process'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startStandIns } from '../mocks/serve-all.ts'
import { startFakeStripe, type FakeStripe, type StripeObject } from '../mocks/stripe.ts'
import { startApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { postForm, postJson } from '../support/http.ts'
import { projectRoot } from '../support/project.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { until } from '../support/deadline.ts'
import { PAID_PLANS } from '../../app/modules/billing/plans.ts'

// `npm run billing:sync` against an empty (fake) Stripe account, then again: the second run changes nothing.
let stripe: FakeStripe

beforeAll(async () => {
	stripe = await startFakeStripe({ seedPrices: false })
})
afterAll(async () => {
	await stripe?.close()
})

/** Runs the script asynchronously: the fake Stripe lives in this process and must keep answering. */
function sync(
	target = stripe,
	{ args = [] as string[], env = {} as Record<string, string | undefined> } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
	return new Promise((resolve) => {
		execFile(
			process.execPath,
			['scripts/billing-sync.js', ...args],
			{
				cwd: projectRoot,
				env: {
					PATH: process.env.PATH,
					HOME: process.env.HOME,
					NODE_ENV: 'production',
					STRIPE_SECRET_KEY: 'sk_test_sync',
					STRIPE_API_URL: target.url,
					APP_URL: 'https://app.callsheet.test',
					...env,
				},
				timeout: 60_000,
			},
			(error, stdout, stderr) => resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
		)
	})
}

test('creates every product, price and the portal configuration once, then leaves them alone', async () => {
	// An account of its own: what "created" counts must not depend on the tests before it.
	const empty = await startFakeStripe({ seedPrices: false })
	try {
		await createsThenLeavesAlone(empty)
	} finally {
		await empty.close()
	}
})

async function createsThenLeavesAlone(stripe: FakeStripe) {
	const first = await sync(stripe)
	expect(first.stderr).not.toMatch(/failed/)
	expect(first.status).toBe(0)
	expect(first.stdout).toMatch(/19 created, 0 updated, 0 unchanged/)
	const prices = stripe.store.all('price')
	expect(prices.map((p) => p.lookup_key).sort()).toEqual(
		['agency', 'broadcaster', 'network', 'solo', 'studio', 'team'].flatMap((plan) => [`${plan}_month`, `${plan}_year`]).sort(),
	)
	expect(prices.find((p) => p.lookup_key === 'team_year')).toMatchObject({
		unit_amount: 49000,
		currency: 'usd',
		recurring: { interval: 'year' },
	})
	const portal = stripe.store.all('billing_portal.configuration').find((c) => !c.is_default)
	expect(portal).toMatchObject({
		default_return_url: 'https://app.callsheet.test/account',
		metadata: { managedBy: 'callsheet-billing-sync' },
	})

	const postsBefore = stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/prices').length
	const second = await sync(stripe)
	expect(second.status).toBe(0)
	expect(second.stdout).toMatch(/0 created, 1 updated, 18 unchanged/) // the portal configuration is re-applied
	expect(stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/prices').length).toBe(postsBefore)
	expect(stripe.store.all('price')).toHaveLength(12)
}

test('one failure at Stripe does not fail the sync for a day: the create is tried once more under a key of its own', async () => {
	// Stripe replays a 500 under its idempotency key for 24 hours, and the SDK's retries reuse the key:
	// with fixed keys alone, every run that day failed on the replayed answer.
	const account = await startFakeStripe({ seedPrices: false })
	try {
		account.failNext(/^POST \/v1\/prices$/)
		const first = await sync(account)
		expect(first.stderr).not.toMatch(/failed/)
		expect(first.status).toBe(0)
		expect(first.stdout).toMatch(/19 created, 0 updated, 0 unchanged/)
		const pricePosts = account.requests.filter((r) => r.method === 'POST' && r.path === '/v1/prices')
		const [failedKey] = pricePosts.map((r) => r.idempotencyKey)
		expect(pricePosts.filter((r) => r.idempotencyKey === failedKey).length).toBeGreaterThan(1) // the SDK's retries: replayed 500s
		expect(pricePosts.some((r) => r.idempotencyKey?.startsWith(`${failedKey}-after-failure-`))).toBe(true)
		expect(account.store.all('price').filter((p) => p.active)).toHaveLength(12)
		const second = await sync(account)
		expect(second.stdout).toMatch(/0 created, 1 updated, 18 unchanged/)
	} finally {
		await account.close()
	}
})

test('a product create that failed at Stripe yet made the product: the retry is refused as existing, and the run goes on', async () => {
	const account = await startFakeStripe({ seedPrices: false })
	try {
		account.failNext(/^POST \/v1\/products$/, 1, { afterApplying: true })
		const first = await sync(account)
		expect(first.stderr).not.toMatch(/failed|exists/i)
		expect(first.status).toBe(0)
		expect(first.stdout).toMatch(/19 created, 0 updated, 0 unchanged/)
		const productPosts = account.requests.filter((r) => r.method === 'POST' && r.path === '/v1/products')
		// The failed create was tried once more under a key of its own, and refused as existing.
		expect(productPosts.some((r) => /-after-failure-/.test(r.idempotencyKey ?? ''))).toBe(true)
		expect(
			account.store
				.all('product')
				.map((p) => p.id)
				.sort(),
		).toEqual(PAID_PLANS.map((plan) => `callsheet_${plan}`).sort())
		const second = await sync(account)
		expect(second.stdout).toMatch(/0 created, 1 updated, 18 unchanged/)
	} finally {
		await account.close()
	}
})

test('--help says what it does and touches nothing; any other argument is refused', async () => {
	const requests = stripe.requests.length
	const help = await sync(stripe, { args: ['--help'] })
	expect(help.status).toBe(0)
	expect(help.stdout).toMatch(/^usage: npm run billing:sync/)
	const wrong = await sync(stripe, { args: ['--dry-run'] })
	expect(wrong.status).toBe(2)
	expect(wrong.stderr).toMatch(/^usage: npm run billing:sync/)
	expect(stripe.requests.length).toBe(requests)
})

test('a live key without APP_URL is refused before any change (the portal would return customers to localhost)', async () => {
	const requests = stripe.requests.length
	const live = await sync(stripe, { env: { STRIPE_SECRET_KEY: 'sk_live_sync', APP_URL: undefined } })
	expect(live.status).toBe(1)
	expect(live.stderr).toContain('APP_URL is not set: the live customer portal would send customers back to http://localhost:3000/account')
	expect(stripe.requests.length).toBe(requests)
	// A test key goes ahead, saying where the portal returns.
	const withTestKey = await sync(stripe, { env: { APP_URL: undefined } })
	expect(withTestKey.status).toBe(0)
	expect(withTestKey.stderr).toContain('warning: APP_URL is not set')
	expect(withTestKey.stdout).toContain('Customer portal returns to http://localhost:3000/account')
})

test('an archived price is replaced and takes its lookup key over', async () => {
	expect((await sync()).status).toBe(0) // the catalogue exists, whichever test ran before
	const old = stripe.store.all('price').find((p) => p.lookup_key === 'solo_month')!
	old.active = false
	const result = await sync()
	expect(result.status).toBe(0)
	expect(result.stdout).toContain('updated    price solo_month')
	const current = stripe.store.all('price').filter((p) => p.lookup_key === 'solo_month')
	expect(current).toHaveLength(1)
	expect(current[0]).toMatchObject({ active: true, unit_amount: 1900 })
	expect(current[0]!.id).not.toBe(old.id)
})

test('before the catalogue is synced, checkout says billing is not enabled (503) and the log says what to run; afterwards it works', async () => {
	expectServerLog(/^billing: checkout is not available: No active price with lookup key \S+: run npm run billing:sync$/)
	const empty = await startFakeStripe({ seedPrices: false })
	const standIns = await startStandIns()
	const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env, STRIPE_API_URL: empty.url })
	try {
		const userId = newClerkUserId()
		const checkout = () =>
			postJson(`${app.url}/api/billing/checkout`, { plan: 'studio', interval: 'year' }, sessionHeaders(standIns.clerk, userId))
		const before = await checkout()
		expect(before.status).toBe(503)
		expect(await before.json()).toMatchObject({ code: 'processor_not_configured' })
		await until(() => app.output().includes('run npm run billing:sync'), 5_000, 'the hint in the log')
		// Refused before anything was made at the processor: no customer either.
		expect(empty.store.all('customer')).toEqual([])

		expect((await sync(empty)).status).toBe(0)
		const after = await checkout()
		expect(after.status).toBe(200)
		expect(await after.json()).toEqual({ url: expect.stringMatching(/^http/) })
	} finally {
		await app.stop()
		await standIns.close()
		await empty.close()
	}
})

test.each([
	['made by an earlier sync', false],
	// The contract finds prices by lookup key alone: an operator may have made them in the Dashboard.
	['made by hand, with only their lookup keys', true],
])(
	'prices %s: a price change leaves subscribers on their plan: the new price takes the lookup key, the old one still says which plan it is',
	async (_label, byHand) => {
		const standIns = await startStandIns()
		const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env })
		standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
		const headers = sessionHeaders(standIns.clerk, newClerkUserId())
		const status = async () => (await fetch(`${app.url}/api/billing/status`, { headers })).json()
		if (byHand) for (const price of standIns.stripe.store.all('price')) price.metadata = {}
		try {
			const opened = await postJson(`${app.url}/api/billing/checkout`, { plan: 'studio', interval: 'month' }, headers)
			const sessionId = String((await opened.json()).url)
				.split('/')
				.pop()
			const paid = await fetch(`${standIns.stripe.url}/checkout/${sessionId}/pay`, { method: 'POST', redirect: 'manual' })
			expect(paid.status).toBe(303)
			expect(await status()).toMatchObject({ plan: 'studio', credits_daily: 1500, has_subscription: true })
			const subscribedPrice = standIns.stripe.store.priceByLookupKey('studio_month')!

			// The seeded account's amounts are not the plan table's: the sync replaces every price, and each
			// new one takes its plan's lookup key from the price the subscriber stays on.
			expect((await sync(standIns.stripe, { env: { STRIPE_SECRET_KEY: standIns.env.STRIPE_SECRET_KEY } })).status).toBe(0)
			expect(standIns.stripe.store.priceByLookupKey('studio_month')!.id).not.toBe(subscribedPrice.id)
			expect(subscribedPrice.lookup_key).toBeNull()
			expect(subscribedPrice.metadata).toMatchObject({ plan: 'studio', interval: 'month' })

			// The subscriber's next event (a renewal, a change in the portal) reads the subscription again.
			const subscription = standIns.stripe.store.all('subscription').find((s) => s.status === 'trialing' || s.status === 'active')!
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
			expect(await status()).toMatchObject({ plan: 'studio', credits_daily: 1500, has_subscription: true })
			// Still subscribed: no second checkout.
			const again = await postJson(`${app.url}/api/billing/checkout`, { plan: 'team', interval: 'month' }, headers)
			expect(again.status).toBe(409)
			expect(await again.json()).toMatchObject({ code: 'already-subscribed' })
			// Their account page says what they still pay (the old price's $59), while /pricing offers the new $99.
			const account = await (await fetch(`${app.url}/account`, { headers })).text()
			expect(account).toContain('<dt>Plan</dt><dd>Studio</dd><dt>Price</dt><dd>$59 a month</dd>')

			// The app read the old price for the first checkout and keeps it for minutes; Stripe refuses the
			// archived price, so the next checkout looks the plan's price up again instead of failing.
			const newcomer = sessionHeaders(standIns.clerk, newClerkUserId())
			const next = await postJson(`${app.url}/api/billing/checkout`, { plan: 'studio', interval: 'month' }, newcomer)
			expect(next.status).toBe(200)
			const nextSession = String((await next.json()).url)
				.split('/')
				.pop()!
			expect(standIns.stripe.checkoutParams(nextSession)!.line_items).toEqual([
				{ price: standIns.stripe.store.priceByLookupKey('studio_month')!.id, quantity: '1' },
			])
		} finally {
			await app.stop()
			await standIns.close()
		}
	},
)

test('a plan whose price is archived with none in its place: checkout says billing is not enabled (503), not 500, though the app had the price cached', async () => {
	expectServerLog(/^billing: checkout is not available: No active price with lookup key solo_year: run npm run billing:sync$/)
	const standIns = await startStandIns()
	const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env })
	const checkout = () =>
		postJson(`${app.url}/api/billing/checkout`, { plan: 'solo', interval: 'year' }, sessionHeaders(standIns.clerk, newClerkUserId()))
	try {
		expect((await checkout()).status).toBe(200) // the app now has solo_year's price cached
		standIns.stripe.store.priceByLookupKey('solo_year')!.active = false // archived in the Dashboard
		const refused = await checkout()
		expect(refused.status).toBe(503)
		expect(await refused.json()).toMatchObject({ code: 'processor_not_configured' })
	} finally {
		await app.stop()
		await standIns.close()
	}
})

test('the customer portal opens on the configuration the sync manages: before a sync, on the account default with one note; after it, on ours without a restart', async () => {
	const note = /^billing: no customer-portal configuration from the sync: .* until an operator runs npm run billing:sync$/
	expectServerLog(note)
	const account = await startFakeStripe({ seedPortalConfiguration: false }) // prices as if made by hand
	const standIns = await startStandIns()
	const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env, STRIPE_API_URL: account.url })
	try {
		const headers = sessionHeaders(standIns.clerk, newClerkUserId())
		expect((await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, headers)).status).toBe(200) // the user's customer
		const configurationOf = (url: string) => account.store.get(url.split('/').pop()!, 'billing_portal.session')?.configuration
		const portal = async (expected = 200) => {
			const response = await postJson(`${app.url}/api/billing/portal`, {}, headers)
			expect(response.status).toBe(expected)
			return (await response.json()) as { url: string; code?: string }
		}
		const accountDefault = account.store.all('billing_portal.configuration').find((c) => c.is_default)!

		// Never synced: the Dashboard's settings, as before, and the operator is told once.
		expect(configurationOf((await portal()).url)).toBe(accountDefault.id)
		expect(configurationOf((await portal()).url)).toBe(accountDefault.id)
		expect(app.errorOutput().match(new RegExp(note.source, 'gm'))).toHaveLength(1)

		expect((await sync(account)).status).toBe(0)
		const ours = account.store.all('billing_portal.configuration').find((c) => !c.is_default)!
		expect(ours.metadata).toEqual({ managedBy: 'callsheet-billing-sync' })
		expect(configurationOf((await portal()).url)).toBe(ours.id)
		// The account page's Manage billing button opens the same portal, with no second lookup.
		const lookups = () => account.requests.filter((r) => r.method === 'GET' && r.path === '/v1/billing_portal/configurations').length
		const lookupsBefore = lookups()
		const fromPage = await postForm(`${app.url}/account`, { intent: 'portal' }, { ...headers, Origin: app.url })
		expect(fromPage.status).toBe(303)
		expect(configurationOf(fromPage.headers.get('location')!)).toBe(ours.id)
		expect(lookups()).toBe(lookupsBefore)

		// Ours gone and replaced (a sandbox reset and synced again): the refusal makes the app look
		// again, and the same request opens on the new one.
		account.store.objects.delete(ours.id)
		const replacement: StripeObject = account.store.put({ ...ours, id: 'bpc_replacement' })
		expect(configurationOf((await portal()).url)).toBe(replacement.id)
		expect(app.output()).toContain(`billing: portal configuration ${ours.id} was refused by the processor (No such configuration:`)
		// Ours deactivated in the Dashboard: the account's default until a sync activates ours again.
		replacement.active = false
		expect(configurationOf((await portal()).url)).toBe(accountDefault.id)
		expect(configurationOf((await portal()).url)).toBe(accountDefault.id)
		expect(app.output()).toContain(`billing: portal configuration ${replacement.id} was refused by the processor`)
		expect((await sync(account)).status).toBe(0)
		expect(replacement.active).toBe(true)
		expect(configurationOf((await portal()).url)).toBe(replacement.id)
		expect(app.errorOutput().match(new RegExp(note.source, 'gm'))).toHaveLength(1)
	} finally {
		await app.stop()
		await standIns.close()
		await account.close()
	}
})

test('our portal configuration, deactivated in the Dashboard, is active again after a sync', async () => {
	expect((await sync()).status).toBe(0) // the catalogue exists, whichever test ran before
	const ours = () =>
		stripe.store
			.all('billing_portal.configuration')
			.find((c) => (c.metadata as Record<string, string>).managedBy === 'callsheet-billing-sync')!
	ours().active = false
	expect((await sync()).status).toBe(0)
	expect(ours().active).toBe(true)
})

test('a second portal configuration of ours (a create that failed at Stripe yet made one) is deactivated; the older one is kept', async () => {
	expect((await sync()).status).toBe(0) // the catalogue exists, whichever test ran before
	const tagged = () =>
		stripe.store
			.all('billing_portal.configuration')
			.filter((c) => (c.metadata as Record<string, string>).managedBy === 'callsheet-billing-sync')
	const [kept] = tagged()
	stripe.store.put({
		...kept!,
		id: 'bpc_second_of_ours',
		created: Number(kept!.created) + 60,
		default_return_url: 'https://old.example/account',
	})
	const result = await sync()
	expect(result.status).toBe(0)
	expect(result.stdout).toContain('updated    portal configuration bpc_second_of_ours (deactivated: a second one of ours)')
	expect(
		tagged()
			.filter((c) => c.active)
			.map((c) => c.id),
	).toEqual([kept!.id])
	expect(stripe.store.get('bpc_second_of_ours')?.active).toBe(false)
	// The next run leaves the inactive one alone.
	expect((await sync()).stdout).toMatch(/0 created, 1 updated, 18 unchanged/)
})
