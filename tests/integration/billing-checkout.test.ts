import pg from 'pg'
import { describe, expect, inject, test } from 'vitest'
import type { StripeObject } from '../mocks/stripe.ts'
import { postForm, postJson } from '../support/http.ts'
import { newClerkUserId } from '../support/sessions.ts'
import { FREE_STATUS } from '../support/status-payloads.ts'
import { STRIPE_LIVE_KEY } from '../mocks/serve-all.ts'
import { startApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { PAID_PLANS } from '#app/modules/billing/plans.ts'
import {
	app,
	appEnv,
	auth,
	checkout,
	pay,
	serveBillingApp,
	sessionIdOf,
	standIns,
	status,
	stored,
	subscribedUser,
	subscriptionIdFor,
} from '../support/billing-app.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { until } from '../support/deadline.ts'

// Checkout, status and the portal: the signed-in billing endpoints a user calls.
serveBillingApp()

describe('signed-in endpoints without a valid session', () => {
	test.each([
		['GET', '/api/billing/status'],
		['POST', '/api/billing/checkout'],
		['POST', '/api/billing/portal'],
	])('%s %s → 401 JSON naming the Bearer scheme (RFC 9110 §15.5.2), even for a browser asking for HTML', async (method, path) => {
		expectServerLog(/^auth: \d+ session token\(s\) refused \(/)
		for (const headers of [{ Accept: 'text/html' }, { Cookie: '__session=garbage; __client_uat=1' }] as Array<Record<string, string>>) {
			const response = await fetch(`${app.url}${path}`, {
				method,
				headers: { 'Content-Type': 'application/json', ...headers },
				body: method === 'POST' ? '{"plan":"team"}' : undefined,
				redirect: 'manual',
			})
			expect(response.status).toBe(401)
			expect(response.headers.get('www-authenticate')).toBe('Bearer')
			expect(await response.json()).toEqual({ error: expect.any(String), code: 'unauthorized' })
		}
	})
})

describe('GET /api/billing/status', () => {
	test("a new user's exact payload", async () => {
		expect(await status(newClerkUserId())).toEqual(FREE_STATUS)
	})

	test('current_period_end is the latest period end across the subscription items', async () => {
		const { userId, customer } = await subscribedUser('team')
		const subscription = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'active')
		const items = subscription.items as { data: StripeObject[] }
		const [item] = items.data
		const base = Number(item!.current_period_end)
		// Whole seconds, the latest neither first nor last, each item ending on another day.
		const ends = [base + 3 * 86_400, base + 40 * 86_400 + 17, base + 86_400]
		items.data = ends.map((end, i) => ({ ...structuredClone(item!), id: `${item!.id}_${i}`, current_period_end: end }))
		Object.assign(items, { total_count: ends.length })
		const delivery = await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))
		expect(delivery.status).toBe(200)
		expect(await status(userId)).toEqual({
			plan: 'team',
			status: 'active',
			credits_daily: 600,
			current_period_end: new Date((base + 40 * 86_400 + 17) * 1000).toISOString(),
			processor_customer_id: customer,
			has_subscription: true,
		})
	})
})

describe('POST /api/billing/checkout', () => {
	test.each([
		[{}, 'plan missing'],
		[{ plan: 'enterprise' }, 'unknown plan'],
		[{ plan: 'free' }, 'free is not for sale'],
		[{ plan: 'team', interval: 'week' }, 'unknown interval'],
	] as Array<[Record<string, string>, string]>)('%j → 400 bad-body (%s)', async (body) => {
		const response = await checkout(newClerkUserId(), body)
		expect(response.status).toBe(400)
		expect(await response.json()).toMatchObject({ code: 'bad-body', issues: expect.any(Array) })
	})

	test('the session carries exactly the contract parameters, with a trial the first time', async () => {
		const userId = newClerkUserId()
		const response = await checkout(userId, { plan: 'team', interval: 'year' })
		expect(response.status).toBe(200)
		const { url } = await response.json()
		expect(url).toMatch(new RegExp(`^${standIns.stripe.url}/checkout/cs_`))
		const params = standIns.stripe.checkoutParams(sessionIdOf(url))!
		const customer = standIns.stripe.store.get(String(params.customer), 'customer')!
		const userUuid = (customer.metadata as Record<string, string>).userId
		expect(userUuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
		// toEqual: a parameter the contract does not name (an added option) fails this too.
		expect(params).toEqual({
			mode: 'subscription',
			customer: customer.id,
			line_items: [{ price: standIns.stripe.priceFor('team', 'year').id, quantity: '1' }],
			client_reference_id: userUuid,
			metadata: { userId: userUuid },
			subscription_data: { metadata: { userId: userUuid }, trial_period_days: '14' },
			success_url: `${app.url}/account?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
			cancel_url: `${app.url}/pricing?checkout=canceled`,
		})
		// The status endpoint now shows the stored customer id.
		expect((await status(userId)).processor_customer_id).toBe(customer.id)
	})

	test.each(['solo', 'team', 'studio', 'agency', 'network', 'broadcaster'])(
		"a first checkout of %s offers the plan's 14-day trial, as the pricing page says",
		async (plan) => {
			const { url } = await (await checkout(newClerkUserId(), { plan })).json()
			expect(standIns.stripe.checkoutParams(sessionIdOf(url))!.subscription_data).toEqual(
				expect.objectContaining({ trial_period_days: '14' }),
			)
		},
	)

	test.each([[{ plan: 'solo' }], [{ plan: 'solo', interval: null }]])('interval defaults to month: %o', async (body) => {
		const { url } = await (await checkout(newClerkUserId(), body)).json()
		const params = standIns.stripe.checkoutParams(sessionIdOf(url))!
		expect(params.line_items).toEqual([{ price: standIns.stripe.priceFor('solo', 'month').id, quantity: '1' }])
	})

	test('the return address from checkout reads the session at most 10 times a minute per user; the page still shows', async () => {
		const userId = newClerkUserId()
		const { url } = await (await checkout(userId, { plan: 'solo' })).json()
		const sessionId = sessionIdOf(url)
		const reads = () => standIns.stripe.requests.filter((r) => r.method === 'GET' && r.path === `/v1/checkout/sessions/${sessionId}`).length
		for (let visit = 0; visit < 12; visit++) {
			const page = await fetch(`${app.url}/account?checkout=success&session_id=${sessionId}`, { headers: auth(userId) })
			expect(page.status).toBe(200)
			expect(await page.text()).toContain('<h1')
		}
		expect(reads()).toBe(10)
	})

	test('5 concurrent first checkouts by one user create one customer', async () => {
		const userId = newClerkUserId()
		const responses = await Promise.all(Array.from({ length: 5 }, () => checkout(userId, { plan: 'studio' })))
		expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
		const customers = new Set<string>()
		for (const response of responses) {
			const { url } = await response.json()
			customers.add(String(standIns.stripe.checkoutParams(sessionIdOf(url))!.customer))
		}
		expect(customers.size).toBe(1)
		const [customerId] = [...customers]
		const userUuid = (standIns.stripe.store.get(customerId!, 'customer')!.metadata as Record<string, string>).userId
		expect(standIns.stripe.store.all('customer').filter((c) => (c.metadata as Record<string, string>)?.userId === userUuid)).toHaveLength(1)
	})

	test('paying stores the subscription; 409 while subscribed; after cancelling, no second trial and the same customer', async () => {
		const { userId, customer, state } = await subscribedUser('team', 'month')
		expect(state).toMatchObject({
			plan: 'team',
			status: 'trialing',
			credits_daily: 600,
			processor_customer_id: customer,
			has_subscription: true,
		})
		expect(state.current_period_end).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

		const again = await checkout(userId, { plan: 'studio' })
		expect(again.status).toBe(409)
		expect(await again.json()).toMatchObject({ code: 'already-subscribed' })

		const subscriptionId = subscriptionIdFor(customer)
		const canceled = standIns.stripe.setSubscriptionStatus(subscriptionId, 'canceled')
		const delivery = await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))
		expect(delivery.status).toBe(200)
		expect(await status(userId)).toMatchObject({
			plan: 'free',
			status: 'canceled',
			has_subscription: false,
			processor_customer_id: customer,
		})

		const { url } = await (await checkout(userId, { plan: 'solo' })).json()
		const params = standIns.stripe.checkoutParams(sessionIdOf(url))!
		expect(params.customer).toBe(customer)
		expect((params.subscription_data as Record<string, unknown>).trial_period_days).toBeUndefined()
	})

	test.each([
		['active', 'active'],
		['past_due', 'past_due'],
		['unpaid', 'past_due'],
	] as const)('409 already-subscribed while the processor says %s (status %s); no checkout is opened', async (processorStatus, shown) => {
		const { userId, customer } = await subscribedUser('team')
		const subscription = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), processorStatus)
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: shown, has_subscription: true })
		const sessionsBefore = standIns.stripe.store.all('checkout.session').length
		for (const body of [{ plan: 'studio' }, { plan: 'team', interval: 'year' }, { plan: 'team' }]) {
			const response = await checkout(userId, body)
			expect(response.status, JSON.stringify(body)).toBe(409)
			expect(await response.json()).toEqual({ error: expect.any(String), code: 'already-subscribed' })
		}
		expect(standIns.stripe.store.all('checkout.session')).toHaveLength(sessionsBefore)
	})

	test('one user may open checkout for every paid plan in both periods in a row, each for its own price', async () => {
		const userId = newClerkUserId()
		for (const plan of PAID_PLANS) {
			for (const interval of ['month', 'year'] as const) {
				const response = await checkout(userId, { plan, interval })
				expect(response.status, `${plan} ${interval}`).toBe(200)
				const { url } = await response.json()
				const params = standIns.stripe.checkoutParams(sessionIdOf(url))!
				expect(params.line_items).toEqual([{ price: standIns.stripe.priceFor(plan, interval).id, quantity: '1' }])
			}
		}
	})

	test('more than 30 checkouts a minute by one user are 429 with Retry-After; other users are unaffected', async () => {
		const userId = newClerkUserId()
		const statuses: number[] = []
		for (let i = 0; i < 31; i++) statuses.push((await checkout(userId, { plan: 'solo' })).status)
		expect(statuses).toEqual([...Array(30).fill(200), 429])
		const limited = await checkout(userId, { plan: 'solo' })
		expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
		expect(await limited.json()).toMatchObject({ code: 'rate-limited' })
		expect((await checkout(newClerkUserId(), { plan: 'solo' })).status).toBe(200)
	})

	test('the processor hanging: the call is retried once under the same idempotency key, then 500 server-error', async () => {
		expectServerLog(/^billing: checkout for user \S+ failed: /)
		const before = standIns.stripe.requests.length
		standIns.stripe.setMode('hang')
		try {
			const response = await checkout(newClerkUserId(), { plan: 'team' })
			expect(response.status).toBe(500)
			expect(await response.json()).toMatchObject({ code: 'server-error' })
		} finally {
			standIns.stripe.setMode('ok')
		}
		// The first call of a new user's checkout creates their customer: it timed out, was sent once
		// more under the same key (so the retry can never make a second customer), and then the app gave up.
		const attempts = standIns.stripe.requests.slice(before)
		expect(attempts.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/customers', 'POST /v1/customers'])
		expect(attempts[0]!.idempotencyKey).toMatch(/\S/)
		expect(attempts[1]!.idempotencyKey).toBe(attempts[0]!.idempotencyKey)
	})

	test('a customer create that failed at the processor after making the customer: that customer is used, no second one', async () => {
		const userId = newClerkUserId()
		const customersOf = () =>
			standIns.stripe.store.all('customer').filter((customer) => (customer.metadata as Record<string, string>).clerkId === userId)
		// Stripe answers 500, and replays that 500 to the SDK's retry under the same key, yet made it.
		standIns.stripe.failNext(/^POST \/v1\/customers$/, 1, { afterApplying: true })
		const response = await checkout(userId, { plan: 'team' })
		expect(response.status).toBe(200)
		expect(customersOf()).toHaveLength(1)
		const [made] = customersOf()
		expect(standIns.stripe.checkoutParams(sessionIdOf((await response.json()).url))!.customer).toBe(made!.id)
		expect((await (await fetch(`${app.url}/api/billing/status`, { headers: auth(userId) })).json()).processor_customer_id).toBe(made!.id)
		expect((await checkout(userId, { plan: 'team' })).status).toBe(200)
		expect(customersOf()).toHaveLength(1)
	})

	test('a customer an earlier attempt made, older than the list is read back, is found by search and used, while Stripe replays the 500 of that attempt', async () => {
		const userId = newClerkUserId()
		expect((await fetch(`${app.url}/api/billing/status`, { headers: auth(userId) })).status).toBe(200)
		const { id: uuid } = await stored((prisma) => prisma.user.findUniqueOrThrow({ where: { clerkId: userId }, select: { id: true } }))
		// Made an hour ago by an attempt whose create answered 500; the key still answers so (here: fails twice, the SDK's retry too).
		const earlier = standIns.stripe.store.createCustomer({ metadata: { userId: uuid, clerkId: userId } })
		earlier.created = Math.floor(Date.now() / 1000) - 3600
		standIns.stripe.failNext(/^POST \/v1\/customers$/, 2)
		const response = await checkout(userId, { plan: 'team' })
		expect(response.status).toBe(200)
		expect(standIns.stripe.checkoutParams(sessionIdOf((await response.json()).url))!.customer).toBe(earlier.id)
		expect(
			standIns.stripe.store.all('customer').filter((customer) => (customer.metadata as Record<string, string>).clerkId === userId),
		).toHaveLength(1)
	})

	// Thirty failures, each after the SDK's retries and their back-off: ~47 s in every full run, spent
	// waiting rather than computing, too close to the project's 60 s default.
	test('the processor failing answers 500 server-error, and a retry then works, however many failed before', async () => {
		expectServerLog(/^billing: checkout for user \S+ failed: /, /^billing: could not look for a customer made for user \S+; making one: /)
		const userId = newClerkUserId()
		standIns.stripe.setMode('error500')
		try {
			// As many failures as the per-user limit allows checkouts: a failure on our side is not counted.
			for (let attempt = 0; attempt < 30; attempt++) {
				const response = await checkout(userId, { plan: 'team' })
				expect(response.status).toBe(500)
				expect(await response.json()).toMatchObject({ code: 'server-error' })
			}
		} finally {
			standIns.stripe.setMode('ok')
		}
		expect((await checkout(userId, { plan: 'team' })).status).toBe(200)
	}, 120_000)
})

describe("a stored customer the processor does not know (deleted in the Dashboard, or made with the other mode's key)", () => {
	const unknown = /^billing: customer cus_\w+ of user \S+ is unknown to the processor \(deleted, or made with the other mode's key\); /

	test('checkout replaces it with a new customer and opens, once', async () => {
		expectServerLog(unknown)
		const userId = newClerkUserId()
		expect((await checkout(userId, { plan: 'team' })).status).toBe(200)
		const gone = (await status(userId)).processor_customer_id as string
		standIns.stripe.store.objects.delete(gone)
		const again = await checkout(userId, { plan: 'team' })
		expect(again.status).toBe(200)
		const replacement = (await status(userId)).processor_customer_id as string
		expect(replacement).toMatch(/^cus_/)
		expect(replacement).not.toBe(gone)
		expect(standIns.stripe.checkoutParams(sessionIdOf((await again.json()).url))).toMatchObject({ customer: replacement })
		// The replacement is kept: the next checkout uses it without asking for another.
		const customersBefore = standIns.stripe.store.all('customer').length
		expect((await checkout(userId, { plan: 'solo' })).status).toBe(200)
		expect(standIns.stripe.store.all('customer').length).toBe(customersBefore)
		expect((await status(userId)).processor_customer_id).toBe(replacement)
	})

	test('the portal says there is no billing account yet and forgets it, instead of failing for good', async () => {
		expectServerLog(unknown)
		const userId = newClerkUserId()
		expect((await checkout(userId, { plan: 'team' })).status).toBe(200)
		standIns.stripe.store.objects.delete((await status(userId)).processor_customer_id as string)
		const portal = await postJson(`${app.url}/api/billing/portal`, {}, auth(userId))
		expect(portal.status).toBe(404)
		expect(await portal.json()).toMatchObject({ code: 'no-customer' })
		expect((await status(userId)).processor_customer_id).toBeNull()
	})
})

describe('a refusal while subscribed is confirmed with the processor: the stored state can outlive the subscription (decision 0029)', () => {
	const gone =
		/^billing: subscription sub_\w+ of user \S+ is unknown to the processor \(deleted, or of the other mode's key\); its stored state is dropped$/
	const trialOffered = (url: string) =>
		(standIns.stripe.checkoutParams(sessionIdOf(url))!.subscription_data as Record<string, unknown>).trial_period_days

	test('a cancellation whose event never arrived: checkout reads it at the processor, stores it, and opens, without a second trial', async () => {
		const { userId, customer } = await subscribedUser('team')
		standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'canceled') // its event lost for good
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing' })
		const again = await checkout(userId, { plan: 'solo' })
		expect(again.status).toBe(200)
		expect(trialOffered((await again.json()).url)).toBeUndefined()
		expect(await status(userId)).toMatchObject({
			plan: 'free',
			status: 'canceled',
			has_subscription: false,
			processor_customer_id: customer,
		})
	})

	test('a subscription the processor no longer has (its customer kept): the stored one is dropped and checkout opens', async () => {
		expectServerLog(gone)
		const { userId, customer } = await subscribedUser('studio')
		standIns.stripe.store.objects.delete(subscriptionIdFor(customer))
		const again = await checkout(userId, { plan: 'team' })
		expect(again.status).toBe(200)
		expect(trialOffered((await again.json()).url)).toBeUndefined()
		expect(await status(userId)).toEqual({ ...FREE_STATUS, processor_customer_id: customer })
	})

	test('the processor cannot be asked: the stored subscription stands, 409, and nothing is opened', async () => {
		expectServerLog(/^billing: could not confirm subscription sub_\w+ of user \S+; its stored state stands: /)
		const { userId, customer } = await subscribedUser('team')
		const sessionsBefore = standIns.stripe.store.all('checkout.session').length
		// Both the call and the SDK's one retry fail.
		standIns.stripe.failNext(new RegExp(`^GET /v1/subscriptions/${subscriptionIdFor(customer)}$`), 2)
		const again = await checkout(userId, { plan: 'solo' })
		expect(again.status).toBe(409)
		expect(await again.json()).toMatchObject({ code: 'already-subscribed' })
		expect(standIns.stripe.store.all('checkout.session')).toHaveLength(sessionsBefore)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing' })
	})

	test('a subscriber whose customer is gone at the processor, subscriptions and all: the portal finds none, the plan is no longer shown, and checkout opens', async () => {
		expectServerLog(gone, /^billing: customer cus_\w+ of user \S+ is unknown to the processor /)
		const { userId, customer } = await subscribedUser('team')
		standIns.stripe.store.objects.delete(subscriptionIdFor(customer))
		standIns.stripe.store.objects.delete(customer)
		const portal = await postJson(`${app.url}/api/billing/portal`, {}, auth(userId))
		expect(portal.status).toBe(404)
		expect(await portal.json()).toMatchObject({ code: 'no-customer' })
		expect(await status(userId)).toEqual(FREE_STATUS)
		const again = await checkout(userId, { plan: 'team' })
		expect(again.status).toBe(200)
		expect(trialOffered((await again.json()).url)).toBeUndefined()
	})
})

describe('a subscriber whose customer was deleted in the Dashboard (Stripe cancels its subscriptions, which stay readable)', () => {
	test('the portal finds no customer and forgets it for good; the plan shows as ended; checkout opens on a new customer', async () => {
		expectServerLog(/^billing: customer cus_\w+ of user \S+ is unknown to the processor /)
		const { userId, customer } = await subscribedUser('team')
		standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'canceled')
		standIns.stripe.store.objects.delete(customer)
		for (let attempt = 0; attempt < 2; attempt++) {
			const portal = await postJson(`${app.url}/api/billing/portal`, {}, auth(userId))
			expect(portal.status).toBe(404)
			expect(await portal.json()).toMatchObject({ code: 'no-customer' })
			// Not brought back by storing the cancelled subscription's reading (it names that customer).
			expect(await status(userId)).toMatchObject({ plan: 'free', status: 'canceled', has_subscription: false, processor_customer_id: null })
		}
		const again = await checkout(userId, { plan: 'team' })
		expect(again.status).toBe(200)
		expect((await status(userId)).processor_customer_id).not.toBe(customer)
	})
})

describe("a row holding another product's subscription, stored before those were told apart (decision 0029)", () => {
	test("checkout reads the customer's subscriptions to our plans: with none live it opens, and the plan shown is ours", async () => {
		const { userId, customer } = await subscribedUser('team')
		const ours = subscriptionIdFor(customer)
		standIns.stripe.setSubscriptionStatus(ours, 'canceled') // its event lost
		const other = standIns.stripe.createSubscription({ customer, plan: 'lighting', status: 'active' })
		await stored((prisma) =>
			prisma.subscription.updateMany({
				where: { stripeSubscriptionId: ours },
				data: { stripeSubscriptionId: String(other.id), plan: 'free', processorStatus: 'active' },
			}),
		)
		expect(await status(userId)).toMatchObject({ plan: 'free', status: 'active', has_subscription: true })
		const again = await checkout(userId, { plan: 'solo' })
		expect(again.status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'free', status: 'canceled', has_subscription: false })
	})

	/** A subscriber whose stored row names another product's live subscription instead of theirs. */
	async function rowOfAnotherProduct(plan = 'team') {
		const { userId, customer } = await subscribedUser(plan)
		const ours = subscriptionIdFor(customer)
		const other = standIns.stripe.createSubscription({ customer, plan: 'lighting', status: 'active' })
		await stored((prisma) =>
			prisma.subscription.updateMany({
				where: { stripeSubscriptionId: ours },
				data: { stripeSubscriptionId: String(other.id), plan: 'free', processorStatus: 'active' },
			}),
		)
		return { userId, ours }
	}

	test('ours still live: 409, nothing is opened, and the plan shown is ours again', async () => {
		const { userId } = await rowOfAnotherProduct('studio')
		const sessionsBefore = standIns.stripe.store.all('checkout.session').length
		const again = await checkout(userId, { plan: 'solo' })
		expect(again.status).toBe(409)
		expect(await again.json()).toMatchObject({ code: 'already-subscribed' })
		expect(standIns.stripe.store.all('checkout.session')).toHaveLength(sessionsBefore)
		expect(await status(userId)).toMatchObject({ plan: 'studio', status: 'trialing', has_subscription: true })
	})

	test("the processor failing to list the customer's subscriptions: the stored state stands, 409 (not a 500 to retry)", async () => {
		expectServerLog(/^billing: could not confirm subscription sub_\w+ of user \S+; its stored state stands: /)
		const { userId } = await rowOfAnotherProduct()
		standIns.stripe.failNext(/^GET \/v1\/subscriptions$/, 2) // the call and the SDK's one retry
		const again = await checkout(userId, { plan: 'solo' })
		expect(again.status).toBe(409)
		expect(await again.json()).toMatchObject({ code: 'already-subscribed' })
	})

	test('none of ours at the processor: the row is dropped, said in the log, and checkout opens', async () => {
		expectServerLog(
			/^billing: subscription sub_\w+ of user \S+ is another product's, and the customer has none of ours; its stored state is dropped$/,
		)
		const { userId, ours } = await rowOfAnotherProduct()
		standIns.stripe.store.objects.delete(ours)
		const again = await checkout(userId, { plan: 'solo' })
		expect(again.status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'free', status: 'none', has_subscription: false })
		await until(() => /is another product's, and the customer has none of ours/.test(app.output()), 5_000, 'the log line')
	})
})

describe('POST /api/billing/portal', () => {
	test('404 no-customer before any checkout; afterwards a portal URL that returns to the account page', async () => {
		const userId = newClerkUserId()
		const before = await postJson(`${app.url}/api/billing/portal`, {}, auth(userId))
		expect(before.status).toBe(404)
		expect(await before.json()).toMatchObject({ code: 'no-customer' })
		await checkout(userId, { plan: 'team' })
		const after = await postJson(`${app.url}/api/billing/portal`, {}, auth(userId))
		expect(after.status).toBe(200)
		const { url } = await after.json()
		expect(url).toMatch(new RegExp(`^${standIns.stripe.url}/portal/`))
		const portalRequest = standIns.stripe.requests.filter((r) => r.path === '/v1/billing_portal/sessions').at(-1)!
		expect(portalRequest.params).toMatchObject({ return_url: `${app.url}/account` })
		// On the configuration the sync manages (plan switches), not the account's default.
		const managed = standIns.stripe.store.all('billing_portal.configuration').find((c) => !c.is_default)!
		expect(standIns.stripe.store.get(sessionIdOf(url), 'billing_portal.session')).toMatchObject({ configuration: managed.id })
	})

	test('more than 30 portal sessions a minute by one user are 429 with Retry-After; other users are unaffected', async () => {
		const userId = newClerkUserId()
		await checkout(userId, { plan: 'team' })
		const portal = (user: string) => postJson(`${app.url}/api/billing/portal`, {}, auth(user))
		const statuses: number[] = []
		for (let i = 0; i < 31; i++) statuses.push((await portal(userId)).status)
		expect(statuses).toEqual([...Array(30).fill(200), 429])
		const limited = await portal(userId)
		expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
		expect(await limited.json()).toMatchObject({ code: 'rate-limited' })
		const other = newClerkUserId()
		await checkout(other, { plan: 'team' })
		expect((await portal(other)).status).toBe(200)
	})

	test("the account page's Manage billing opens the same portal configuration", async () => {
		const { userId } = await subscribedUser('solo')
		const response = await postForm(`${app.url}/account`, { intent: 'portal' }, { ...auth(userId), Origin: app.url })
		expect(response.status).toBe(303)
		const session = standIns.stripe.store.get(sessionIdOf(response.headers.get('location')!), 'billing_portal.session')!
		const managed = standIns.stripe.store.all('billing_portal.configuration').find((c) => !c.is_default)!
		expect(session).toMatchObject({ configuration: managed.id, return_url: `${app.url}/account` })
	})
})

describe('identity', () => {
	test('concurrent first requests of a new user all get their answer (no 500 from the race to create the row), and a checkout then finds that user', async () => {
		const userId = newClerkUserId()
		// The portal creates the user's row and answers 500 if that fails (status would fall back to
		// a payload that looks like a new user's, so it could not tell).
		const answers = await Promise.all(Array.from({ length: 8 }, () => postJson(`${app.url}/api/billing/portal`, {}, auth(userId))))
		expect(await Promise.all(answers.map(async (r) => [r.status, (await r.json()).code]))).toEqual(Array(8).fill([404, 'no-customer']))
		// One row: a checkout after the burst finds exactly one user to attach its customer to.
		const { url } = await (await checkout(userId, { plan: 'team' })).json()
		const customer = String(standIns.stripe.checkoutParams(sessionIdOf(url))!.customer)
		expect((await status(userId)).processor_customer_id).toBe(customer)
		expect(await stored((prisma) => prisma.user.count({ where: { clerkId: userId } }))).toBe(1)
	})
})

// PostgreSQL only: there another session's uncommitted row with the same clerkId holds every first
// request's create on the unique index, and fails it once committed: each request loses the race, as
// timing alone makes happen only now and then. (The embedded database runs one statement at a time.)
describe.runIf(inject('databaseKind') === 'postgres')('identity, when every first request loses the race to create the row', () => {
	test("each reads the winner's row and gets its answer (no 500)", async () => {
		const userId = newClerkUserId()
		const winner = new pg.Client({ connectionString: appEnv.DATABASE_URL })
		const observer = new pg.Client({ connectionString: appEnv.DATABASE_URL })
		await Promise.all([winner.connect(), observer.connect()])
		try {
			await winner.query('BEGIN')
			await winner.query('INSERT INTO "User" ("id", "clerkId") VALUES (gen_random_uuid(), $1)', [userId])
			const answers = Promise.all(Array.from({ length: 6 }, () => postJson(`${app.url}/api/billing/portal`, {}, auth(userId))))
			// Sessions waiting on the winner's, not on anything else on this PostgreSQL server (other files' tests).
			const winnerPid = (await winner.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
			const waiting = async () =>
				(
					await observer.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [
						winnerPid,
					])
				).rows[0]!.n
			const deadline = Date.now() + 10_000
			while ((await waiting()) < 6) {
				if (Date.now() > deadline) throw new Error('the six creates waiting on the uncommitted row: not within 10 s')
				await new Promise((resolve) => setTimeout(resolve, 20))
			}
			await winner.query('COMMIT')
			expect(await Promise.all((await answers).map(async (r) => [r.status, (await r.json()).code]))).toEqual(
				Array(6).fill([404, 'no-customer']),
			)
			expect(await stored((prisma) => prisma.user.count({ where: { clerkId: userId } }))).toBe(1)
		} finally {
			await winner.query('ROLLBACK').catch(() => {})
			await Promise.all([winner.end(), observer.end()])
		}
	})
})

// Stripe keeps live and test objects apart, and says which when a key of one mode asks for an object
// of the other (the stand-in does the same). 0029 replaces a customer the processor does not know:
// right for the switch from test keys to live ones, wrong for one instance started with a test key on
// the production database (a rollout, a staging key): it dropped paying users' plans and replaced
// their customers, for every instance, while their live subscriptions went on billing.
describe('keys of two modes on one database', () => {
	const statusAt = async (url: string, userId: string) => (await fetch(`${url}/api/billing/status`, { headers: auth(userId) })).json()
	const subscribeWithKey = async (key: string, databaseUrl: string, userId: string) => {
		const server = await startApp({ ...appEnv, DATABASE_URL: databaseUrl, STRIPE_SECRET_KEY: key })
		standIns.stripe.setWebhookUrl(`${server.url}/api/billing/webhook`)
		try {
			const opened = await postJson(`${server.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))
			expect(opened.status).toBe(200)
			await pay((await opened.json()).url)
			const state = await statusAt(server.url, userId)
			expect(state).toMatchObject({ plan: 'team', has_subscription: true, processor_customer_id: expect.stringMatching(/^cus_/) })
			return String(state.processor_customer_id)
		} finally {
			await server.stop()
			standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
		}
	}

	test('an instance on a test key drops, replaces and forgets nothing a live key made: checkout is 409 on the stored plan, the portal 500 to retry', async () => {
		const otherMode = 'a similar object exists in live mode, but a test mode key was used to make this request.'
		expectServerLog(
			new RegExp(
				`^billing: could not confirm subscription sub_\\w+ of user \\S+; its stored state stands: No such subscription: 'sub_\\w+'; ${otherMode.replaceAll('.', '\\.')}$`,
			),
			new RegExp(`^billing: portal for user \\S+ failed: No such customer: 'cus_\\w+'; ${otherMode.replaceAll('.', '\\.')}$`),
		)
		const databaseUrl = await freshDatabaseUrl()
		const userId = newClerkUserId()
		const customer = await subscribeWithKey(STRIPE_LIVE_KEY, databaseUrl, userId)
		const server = await startApp({ ...appEnv, DATABASE_URL: databaseUrl }) // appEnv's test key
		try {
			const again = await postJson(`${server.url}/api/billing/checkout`, { plan: 'solo' }, auth(userId))
			expect(again.status).toBe(409)
			expect(await again.json()).toMatchObject({ code: 'already-subscribed' })
			const portal = await postJson(`${server.url}/api/billing/portal`, {}, auth(userId))
			expect(portal.status).toBe(500)
			expect(await portal.json()).toMatchObject({ code: 'server-error' })
			expect(await statusAt(server.url, userId)).toMatchObject({ plan: 'team', has_subscription: true, processor_customer_id: customer })
		} finally {
			await server.stop()
		}
	})

	test('the switch from test keys to live ones: the live key replaces the test customer and drops the test plan (0029)', async () => {
		expectServerLog(
			/^billing: subscription sub_\w+ of user \S+ is unknown to the processor \(deleted, or of the other mode's key\); its stored state is dropped$/,
			/^billing: customer cus_\w+ of user \S+ is unknown to the processor \(deleted, or made with the other mode's key\); a new one replaces it$/,
		)
		const databaseUrl = await freshDatabaseUrl()
		const userId = newClerkUserId()
		const testCustomer = await subscribeWithKey(appEnv.STRIPE_SECRET_KEY!, databaseUrl, userId)
		const server = await startApp({ ...appEnv, DATABASE_URL: databaseUrl, STRIPE_SECRET_KEY: STRIPE_LIVE_KEY })
		try {
			const live = await postJson(`${server.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))
			expect(live.status).toBe(200)
			const liveCustomer = String(standIns.stripe.checkoutParams(sessionIdOf((await live.json()).url))!.customer)
			expect(liveCustomer).not.toBe(testCustomer)
			expect(standIns.stripe.store.objects.get(liveCustomer)).toMatchObject({ livemode: true })
			expect(await statusAt(server.url, userId)).toMatchObject({
				plan: 'free',
				has_subscription: false,
				processor_customer_id: liveCustomer,
			})
		} finally {
			await server.stop()
		}
	})
})
