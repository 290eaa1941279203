import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl, readStored, withDatabase } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { postForm, postJson } from '../support/http.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'
import { FREE_STATUS } from '../support/status-payloads.ts'

let standIns: StandIns
let app: RunningApp
let appEnv: Record<string, string>

beforeAll(async () => {
	standIns = await startStandIns()
	appEnv = { DATABASE_URL: await freshDatabaseUrl(), ...standIns.env }
	app = await startApp(appEnv)
	standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
})
afterAll(async () => {
	await app?.stop()
	await standIns?.close()
})

const auth = (userId: string) => sessionHeaders(standIns.clerk, userId)
const status = async (userId: string) => (await fetch(`${app.url}/api/billing/status`, { headers: auth(userId) })).json()
const checkout = (userId: string, body: unknown) => postJson(`${app.url}/api/billing/checkout`, body, auth(userId))
const sessionIdOf = (url: string) => url.split('/').pop()!

/** Pays for the user's checkout the way the hosted page would: the processor then sends its events. */
async function pay(sessionUrl: string) {
	const response = await fetch(`${standIns.stripe.url}/checkout/${sessionIdOf(sessionUrl)}/pay`, { method: 'POST', redirect: 'manual' })
	expect(response.status).toBe(303)
	return response.headers.get('location')!
}

async function subscribedUser(plan = 'team', interval = 'month') {
	const userId = newClerkUserId()
	const { url } = await (await checkout(userId, { plan, interval })).json()
	await pay(url)
	const params = standIns.stripe.checkoutParams(sessionIdOf(url))!
	return { userId, customer: String(params.customer), state: await status(userId) }
}

/**
 * Delivers the event while the fake processor answers late, and resolves once the app's call to
 * `path` has arrived there (its answer is then fixed: the state at arrival). Awaiting the returned
 * `delivery` gives the app's answer.
 */
async function deliverSlowly(type: Parameters<StandIns['stripe']['makeEvent']>[0], subscription: Record<string, unknown>, path: string) {
	const seen = standIns.stripe.requests.length
	standIns.stripe.setLatency(1_500)
	const delivery = standIns.stripe.deliver(standIns.stripe.makeEvent(type, subscription as never))
	try {
		await until(() => standIns.stripe.requests.slice(seen).some((r) => r.path === path), 5_000, `the slow call to ${path}`)
	} finally {
		standIns.stripe.setLatency(0)
	}
	return { delivery, seen }
}

/** Two checkouts opened together (both with the trial); the first paid and delivered, the second paid a minute later, not yet delivered. */
async function twoTrialsSecondPending() {
	const userId = newClerkUserId()
	const urls = await Promise.all(
		(['solo', 'team'] as const).map(async (plan) => (await (await checkout(userId, { plan })).json()).url as string),
	)
	const a = standIns.stripe.store.completeCheckout(sessionIdOf(urls[0]!)).subscription
	expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', a))).status).toBe(200)
	const b = standIns.stripe.store.completeCheckout(sessionIdOf(urls[1]!)).subscription
	b.created = Number(a.created) + 60
	return { userId, a, b }
}

/** A team trial, then a studio subscription a minute newer, both live and delivered. */
async function userPayingTwice() {
	const { userId, customer } = await subscribedUser('team')
	const older = standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!
	const newer = standIns.stripe.createSubscription({ customer, plan: 'studio', status: 'active' })
	newer.created = Number(older.created) + 60
	expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', newer))).status).toBe(200)
	return { userId, older, newer }
}

/** The plan of a subscription at the fake processor, from its price's lookup key (`team_month`). */
function planOf(subscription: Record<string, unknown>) {
	return (subscription.items as { data: { price: { lookup_key: string } }[] }).data[0]!.price.lookup_key.split('_')[0]
}

function subscriptionIdFor(customer: string) {
	const sub = standIns.stripe.store.all('subscription').find((s) => s.customer === customer)
	return String(sub!.id)
}

describe('signed-in endpoints without a valid session', () => {
	test.each([
		['GET', '/api/billing/status'],
		['POST', '/api/billing/checkout'],
		['POST', '/api/billing/portal'],
	])('%s %s → 401 JSON, even for a browser asking for HTML', async (method, path) => {
		for (const headers of [{ Accept: 'text/html' }, { Cookie: '__session=garbage; __client_uat=1' }] as Array<Record<string, string>>) {
			const response = await fetch(`${app.url}${path}`, {
				method,
				headers: { 'Content-Type': 'application/json', ...headers },
				body: method === 'POST' ? '{"plan":"team"}' : undefined,
				redirect: 'manual',
			})
			expect(response.status).toBe(401)
			expect(await response.json()).toEqual({ error: expect.any(String), code: 'unauthorized' })
		}
	})
})

describe('GET /api/billing/status', () => {
	test("a new user's exact payload", async () => {
		expect(await status(newClerkUserId())).toEqual(FREE_STATUS)
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
		expect(params).toMatchObject({
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

	test('more than 10 checkouts a minute by one user are 429 with Retry-After; other users are unaffected', async () => {
		const userId = newClerkUserId()
		const statuses: number[] = []
		for (let i = 0; i < 11; i++) statuses.push((await checkout(userId, { plan: 'solo' })).status)
		expect(statuses).toEqual([...Array(10).fill(200), 429])
		const limited = await checkout(userId, { plan: 'solo' })
		expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
		expect(await limited.json()).toMatchObject({ code: 'rate-limited' })
		expect((await checkout(newClerkUserId(), { plan: 'solo' })).status).toBe(200)
	})

	test('the processor hanging: the call is retried once under the same idempotency key, then 500 server-error', async () => {
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

	test('the processor failing answers 500 server-error, and a retry then works, however many failed before', async () => {
		const userId = newClerkUserId()
		standIns.stripe.setMode('error500')
		try {
			// As many failures as the per-user limit allows checkouts: a failure on our side is not counted.
			for (let attempt = 0; attempt < 10; attempt++) {
				const response = await checkout(userId, { plan: 'team' })
				expect(response.status).toBe(500)
				expect(await response.json()).toMatchObject({ code: 'server-error' })
			}
		} finally {
			standIns.stripe.setMode('ok')
		}
		expect((await checkout(userId, { plan: 'team' })).status).toBe(200)
	})
})

describe('POST /api/billing/webhook', () => {
	const webhook = (payload: string, header?: string) =>
		fetch(`${app.url}/api/billing/webhook`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json', ...(header ? { 'Stripe-Signature': header } : {}) },
			body: payload,
		})

	test('a missing or wrong signature is 400 bad-signature and changes nothing', async () => {
		const { customer } = await subscribedUser()
		const sub = standIns.stripe.store.get(subscriptionIdFor(customer))!
		const event = standIns.stripe.makeEvent('customer.subscription.updated', sub)
		const { payload } = standIns.stripe.signEvent(event)
		expect((await webhook(payload)).status).toBe(400)
		const forged = standIns.stripe.signEvent(event, { secret: 'whsec_wrong' })
		const response = await webhook(forged.payload, forged.header)
		expect(response.status).toBe(400)
		expect(await response.json()).toMatchObject({ code: 'bad-signature' })
		// A tampered body under a valid signature header fails too.
		const signed = standIns.stripe.signEvent(event)
		expect(
			(await webhook(signed.payload.replace('"active"', '"canceled"').replace('"trialing"', '"canceled"'), signed.header)).status,
		).toBe(400)
	})

	test('a signed body that is not an event of the processor is 400 bad-body, not a 500 the processor would retry', async () => {
		const { customer } = await subscribedUser()
		const event = standIns.stripe.makeEvent('customer.subscription.updated', standIns.stripe.store.get(subscriptionIdFor(customer))!)
		const bodies = [
			'not json at all',
			'[]',
			JSON.stringify({ id: 'evt_no_data', type: 'customer.subscription.updated' }),
			JSON.stringify({ ...event, id: 'evt_no_subscription_id', data: { object: { object: 'subscription' } } }),
			JSON.stringify({ ...event, id: 'evt_bad_session', type: 'checkout.session.completed', data: { object: { subscription: 42 } } }),
		]
		for (const body of bodies) {
			const signed = standIns.stripe.signEvent(body)
			const response = await webhook(signed.payload, signed.header)
			expect(response.status, body).toBe(400)
			expect(await response.json(), body).toMatchObject({ code: 'bad-body' })
		}
	})

	test('an event naming a subscription the processor does not know is recorded and answered 200, once', async () => {
		const { userId, customer } = await subscribedUser()
		const known = standIns.stripe.store.get(subscriptionIdFor(customer))!
		const event = standIns.stripe.makeEvent('customer.subscription.deleted', {
			...known,
			id: 'sub_not_in_this_account',
			status: 'canceled',
		})
		const first = await standIns.stripe.deliver(event)
		expect(first.status).toBe(200)
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect((await status(userId)).has_subscription).toBe(true) // the user's own subscription is untouched
		await until(() => app.output().includes('sub_not_in_this_account, unknown to the processor'), 5_000, 'the warning')
	})

	test('a stale signature timestamp is 400, and a huge payload is 413', async () => {
		const { customer } = await subscribedUser()
		const event = standIns.stripe.makeEvent('customer.subscription.updated', standIns.stripe.store.get(subscriptionIdFor(customer))!)
		const stale = standIns.stripe.signEvent(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 })
		const refused = await webhook(stale.payload, stale.header)
		expect(refused.status).toBe(400)
		expect(await refused.json()).toMatchObject({ code: 'bad-signature' })
		const huge = standIns.stripe.signEvent({
			...event,
			data: { object: { ...event.data.object, padding: 'x'.repeat(100 * 1024) } },
		} as typeof event)
		const response = await webhook(huge.payload, huge.header)
		expect(response.status).toBe(413)
		expect(await response.json()).toMatchObject({ code: 'payload-too-large' })
	})

	test('a replayed event changes nothing', async () => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		const event = standIns.stripe.makeEvent('customer.subscription.updated', standIns.stripe.setSubscriptionStatus(id, 'past_due'))
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect((await status(userId)).status).toBe('past_due')
		// The processor moves on, but a replay of the old event must not be applied again.
		standIns.stripe.setSubscriptionStatus(id, 'active')
		const replay = await standIns.stripe.deliver(event)
		expect(replay.status).toBe(200)
		expect(JSON.parse(replay.body)).toEqual({ received: true })
		expect((await status(userId)).status).toBe('past_due')
	})

	test('events delivered in reverse order end in the newest state', async () => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		const events = (['active', 'past_due', 'canceled'] as const).map((s, i) =>
			standIns.stripe.makeEvent('customer.subscription.updated', standIns.stripe.setSubscriptionStatus(id, s), {
				created: 1_800_000_000 + i,
			}),
		)
		for (const event of events.reverse()) expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: 'canceled', plan: 'free', has_subscription: false })
	})

	test('two checkouts left open and both paid: one trial is cancelled at the processor, the other plan shows', async () => {
		const userId = newClerkUserId()
		const [first, second] = await Promise.all(
			(['solo', 'team'] as const).map(async (plan) => (await (await checkout(userId, { plan })).json()).url as string),
		)
		const firstParams = standIns.stripe.checkoutParams(sessionIdOf(first!))!
		const secondParams = standIns.stripe.checkoutParams(sessionIdOf(second!))!
		// Both were opened before any subscription existed, so both offer the trial.
		expect((firstParams.subscription_data as Record<string, unknown>).trial_period_days).toBeDefined()
		expect((secondParams.subscription_data as Record<string, unknown>).trial_period_days).toBeDefined()

		await pay(first!)
		await pay(second!)
		const subscriptions = standIns.stripe.store.all('subscription').filter((s) => s.customer === firstParams.customer)
		expect(subscriptions.map((s) => s.status).sort()).toEqual(['canceled', 'trialing'])
		const [kept, ended] = ['trialing', 'canceled'].map((wanted) => subscriptions.find((s) => s.status === wanted)!)
		expect(standIns.stripe.requests.filter((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${ended!.id}`)).toHaveLength(1)
		// Paid seconds apart the first stays; paid within the same second (as here) the order is by id.
		expect(await status(userId)).toMatchObject({ plan: planOf(kept!), status: 'trialing', has_subscription: true })

		// The processor then reports the ended trial: the status keeps following the live one.
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', ended!))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: planOf(kept!), status: 'trialing', has_subscription: true })
	})

	test('two checkouts paid at the same moment, their events arriving together: one trial survives', async () => {
		const userId = newClerkUserId()
		const urls = await Promise.all(
			(['solo', 'team'] as const).map(async (plan) => (await (await checkout(userId, { plan })).json()).url as string),
		)
		const created = urls.map((url) => standIns.stripe.store.completeCheckout(sessionIdOf(url)).subscription)
		const deliveries = await Promise.all(
			created.map((subscription) => standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', subscription))),
		)
		expect(deliveries.map((d) => d.status)).toEqual([200, 200])
		expect(created.map((s) => s.status).sort()).toEqual(['canceled', 'trialing'])
		const survivor = created.find((s) => s.status === 'trialing')!
		expect(await status(userId)).toMatchObject({ plan: planOf(survivor), status: 'trialing', has_subscription: true })
	})

	test('of two live subscriptions, the newer shows; when it ends, the status follows the one still live', async () => {
		const { userId, older, newer } = await userPayingTwice()
		expect(await status(userId)).toMatchObject({ plan: 'studio', status: 'active' })
		// Paid twice: nothing is ended automatically (that needs a refund); operators are told.
		expect(newer.status).toBe('active')
		expect(app.output()).toContain(`keeps 2 live subscriptions (${newer.id}, ${older.id})`)

		const canceled = standIns.stripe.setSubscriptionStatus(String(newer.id), 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing', has_subscription: true })

		// Any later event about the ended one changes nothing.
		const stale = standIns.stripe.makeEvent('customer.subscription.updated', { ...canceled, status: 'active' })
		expect((await standIns.stripe.deliver(stale)).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing' })
	})

	test('a slow delivery that read a subscription before it ended never overwrites the later reading', async () => {
		const { userId, newer } = await userPayingTwice()

		// This delivery reads the newer subscription while it is still active, and is answered late.
		const slow = (await deliverSlowly('customer.subscription.updated', newer, `/v1/subscriptions/${newer.id}`)).delivery
		const canceled = standIns.stripe.setSubscriptionStatus(String(newer.id), 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing' })

		expect((await slow).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing', has_subscription: true })
	})

	test.each([
		['cancelled it outright', (sub: Record<string, unknown>) => standIns.stripe.setSubscriptionStatus(String(sub.id), 'canceled')],
		['set it to end with the period', (sub: Record<string, unknown>) => void (sub.cancel_at_period_end = true)],
	])('a user who %s in the portal (its event not yet here) and then pays the other open checkout keeps that trial', async (_, endFirst) => {
		const userId = newClerkUserId()
		const [first, second] = await Promise.all(
			(['solo', 'team'] as const).map(async (plan) => (await (await checkout(userId, { plan })).json()).url as string),
		)
		await pay(first!)
		const customer = String(standIns.stripe.checkoutParams(sessionIdOf(first!))!.customer)
		endFirst(standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!)

		await pay(second!)
		const kept = standIns.stripe.store.all('subscription').find((s) => s.customer === customer && s.id !== subscriptionIdFor(customer))!
		expect(kept.status).toBe('trialing')
		expect(standIns.stripe.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${kept.id}`)).toBe(false)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing', has_subscription: true })
	})

	test('a user who sets the first subscription to end while an event about it is being read, then pays the other tab, keeps that trial', async () => {
		const userId = newClerkUserId()
		const [first, second] = await Promise.all(
			(['solo', 'team'] as const).map(async (plan) => (await (await checkout(userId, { plan })).json()).url as string),
		)
		const a = standIns.stripe.store.completeCheckout(sessionIdOf(first!)).subscription
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', a))).status).toBe(200)
		const slow = (await deliverSlowly('customer.subscription.updated', a, `/v1/subscriptions/${a.id}`)).delivery
		a.cancel_at_period_end = true // in the portal, while that read is on its way back…
		const b = standIns.stripe.store.completeCheckout(sessionIdOf(second!)).subscription // …then the other tab is paid
		b.created = Number(a.created) + 60
		expect((await slow).status).toBe(200)
		expect(b.status).toBe('trialing')
	})

	test('a repeated trial another delivery cancelled first (Stripe then answers 404 to ours) is still a 200', async () => {
		const { userId, b } = await twoTrialsSecondPending()
		const { delivery: slow, seen } = await deliverSlowly('customer.subscription.created', b, '/v1/subscriptions')
		standIns.stripe.setSubscriptionStatus(String(b.id), 'canceled') // the other delivery's cancel lands first
		expect((await slow).status).toBe(200)
		expect(standIns.stripe.requests.slice(seen).filter((r) => r.method === 'DELETE')).toHaveLength(1)
		expect(await status(userId)).toMatchObject({ plan: 'solo', status: 'trialing' })
	})

	test('the user sets the subscription they keep to end just before a repeated trial is cancelled: that trial stays', async () => {
		const { userId, a, b } = await twoTrialsSecondPending()
		const { delivery: slow } = await deliverSlowly('customer.subscription.created', b, '/v1/subscriptions')
		a.cancel_at_period_end = true // in the portal, while the list (A kept) is on its way back
		expect((await slow).status).toBe(200)
		expect(b.status).toBe('trialing')
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing' })
	})

	test('both subscriptions cancelled while a slow reading still saw one live: the account ends up not subscribed', async () => {
		const { userId, older, newer } = await userPayingTwice()
		newer.cancel_at_period_end = true // set to end in the portal; this event is read slowly (older still kept)
		const slow = (await deliverSlowly('customer.subscription.updated', newer, '/v1/subscriptions')).delivery
		// Then both are cancelled outright; the older's event is handled while the slow one is in flight.
		standIns.stripe.setSubscriptionStatus(String(older.id), 'canceled')
		standIns.stripe.setSubscriptionStatus(String(newer.id), 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', older))).status).toBe(200)
		expect((await slow).status).toBe(200)
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', newer))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: 'canceled', has_subscription: false, plan: 'free' })
		expect((await checkout(userId, { plan: 'solo' })).status).toBe(200)
	})

	test("another product's customer on the same processor account: its trials are never cancelled", async () => {
		const stranger = standIns.stripe.createCustomer()
		const kept = standIns.stripe.createSubscription({ customer: String(stranger.id), plan: 'team', status: 'active' })
		const trial = standIns.stripe.createSubscription({
			customer: String(stranger.id),
			plan: 'solo',
			status: 'trialing',
			userId: randomUUID(),
		})
		trial.created = Number(kept.created) + 60
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', trial))).status).toBe(200)
		expect(trial.status).toBe('trialing')
		expect(standIns.stripe.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${trial.id}`)).toBe(false)
	})

	test('a processor API without the subscription list: events still take effect, decided from the one subscription', async () => {
		const { userId, customer } = await subscribedUser('team')
		standIns.stripe.setUnsupported(/^GET \/v1\/subscriptions\?/)
		try {
			const canceled = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'canceled')
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
			expect(standIns.stripe.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/subscriptions' })
			expect(await status(userId)).toMatchObject({ plan: 'free', status: 'canceled', has_subscription: false })
		} finally {
			standIns.stripe.setUnsupported(null)
		}
	})

	test.each([
		['active', 'active', true],
		['trialing', 'trialing', true],
		['past_due', 'past_due', true],
		['unpaid', 'past_due', true],
		['paused', 'past_due', true],
		['canceled', 'canceled', false],
		['incomplete', 'none', false],
		['incomplete_expired', 'none', false],
	] as const)('processor status %s maps to %s', async (processorStatus, expected, subscribed) => {
		const { userId, customer } = await subscribedUser('agency')
		const sub = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), processorStatus)
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', sub))).status).toBe(200)
		expect(await status(userId)).toMatchObject({
			status: expected,
			has_subscription: subscribed,
			plan: subscribed ? 'agency' : 'free',
			credits_daily: subscribed ? 4000 : 20,
		})
	})

	test('invoice events refresh the subscription they belong to', async () => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		standIns.stripe.setSubscriptionStatus(id, 'past_due')
		const invoice = standIns.stripe.makeInvoice(id, { paid: false })
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('invoice.payment_failed', invoice))).status).toBe(200)
		expect((await status(userId)).status).toBe('past_due')
	})

	test('an event for an unknown customer, and an event kind we ignore, answer 200', async () => {
		const stranger = standIns.stripe.createCustomer()
		const sub = standIns.stripe.createSubscription({ customer: String(stranger.id), plan: 'team' })
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', sub))).status).toBe(200)
		const ignored = await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.created', stranger))
		expect(ignored.status).toBe(200)
		expect(JSON.parse(ignored.body)).toEqual({ received: true })
	})

	test('the processor failing while we refresh answers 500, and the retried event then succeeds', async () => {
		const { userId, customer } = await subscribedUser()
		const event = standIns.stripe.makeEvent(
			'customer.subscription.updated',
			standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'past_due'),
		)
		standIns.stripe.setMode('error500')
		try {
			const failed = await standIns.stripe.deliver(event)
			expect(failed.status).toBe(500)
			expect(JSON.parse(failed.body)).toMatchObject({ code: 'server-error' })
		} finally {
			standIns.stripe.setMode('ok')
		}
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect((await status(userId)).status).toBe('past_due')
	})

	test('the same event 10 times at once takes effect once', async () => {
		const { userId, customer } = await subscribedUser()
		const subscriptionId = subscriptionIdFor(customer)
		const event = standIns.stripe.makeEvent(
			'customer.subscription.updated',
			standIns.stripe.setSubscriptionStatus(subscriptionId, 'unpaid'),
		)
		const deliveries = await Promise.all(Array.from({ length: 10 }, () => standIns.stripe.deliver(event)))
		expect(deliveries.map((d) => d.status)).toEqual(Array(10).fill(200))
		expect((await status(userId)).status).toBe('past_due')
		// Applying the event is idempotent by itself (the state is read fresh from the processor), so what
		// shows "once" is the ledger: one entry for the event id…
		const read = await readStored(app, appEnv, (prisma) => prisma.webhookEvent.findMany({ where: { id: event.id } }))
		app = read.app
		standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
		expect(read.value.map((row) => row.type)).toEqual(['customer.subscription.updated'])
		// …and a further delivery is known as done before the processor is asked again.
		const before = standIns.stripe.requests.length
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect(standIns.stripe.requests.slice(before).filter((r) => r.path === `/v1/subscriptions/${subscriptionId}`)).toEqual([])
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
	})
})

describe('identity', () => {
	test('concurrent first requests of a new user create one user row', async () => {
		const userId = newClerkUserId()
		// The portal creates the user's row and answers 500 if that fails (status would fall back to
		// a payload that looks like a new user's, so it could not tell).
		const answers = await Promise.all(Array.from({ length: 8 }, () => postJson(`${app.url}/api/billing/portal`, {}, auth(userId))))
		expect(await Promise.all(answers.map(async (r) => [r.status, (await r.json()).code]))).toEqual(Array(8).fill([404, 'no-customer']))
		// One row: a checkout after the burst finds exactly one user to attach its customer to.
		const { url } = await (await checkout(userId, { plan: 'team' })).json()
		const customer = String(standIns.stripe.checkoutParams(sessionIdOf(url))!.customer)
		expect((await status(userId)).processor_customer_id).toBe(customer)
	})
})

/** The server-rendered card of `plan` on the pricing page. */
function planCard(html: string, plan: string) {
	const start = html.indexOf(`aria-labelledby="plan-${plan}"`)
	expect(start, `no card for ${plan}`).toBeGreaterThan(-1)
	return html.slice(start, html.indexOf('</section>', start))
}

describe('the pricing page for a subscriber', () => {
	test('marks the plan in the period it is billed; the same plan in the other period says how to switch', async () => {
		const { userId } = await subscribedUser('team', 'year')
		const page = async (interval: string) => (await fetch(`${app.url}/pricing?interval=${interval}`, { headers: auth(userId) })).text()

		const yearly = planCard(await page('year'), 'team')
		expect(yearly).toContain('Your plan')
		expect(yearly).toContain('Manage billing')

		const monthly = planCard(await page('month'), 'team')
		expect(monthly).not.toContain('Your plan')
		expect(monthly).not.toContain('Manage billing</button>')
		expect(monthly).toContain('You have Team billed yearly.')
		expect(monthly).toContain('href="/account"')
		// Other plans say what they said before, in both periods.
		expect(planCard(await page('month'), 'solo')).toContain('Switch plans from Manage billing.')
	})
})

describe('without processor keys', () => {
	test('checkout and the webhook answer 503 processor_not_configured', async () => {
		const { STRIPE_SECRET_KEY: _s, STRIPE_WEBHOOK_SECRET: _w, ...env } = standIns.env
		const bare = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...env })
		try {
			const response = await postJson(`${bare.url}/api/billing/checkout`, { plan: 'team' }, auth(newClerkUserId()))
			expect(response.status).toBe(503)
			expect(await response.json()).toMatchObject({ code: 'processor_not_configured' })
			const hook = await postJson(`${bare.url}/api/billing/webhook`, '{}', { 'Stripe-Signature': 't=1,v1=x' })
			expect(hook.status).toBe(503)
			expect(await hook.json()).toMatchObject({ code: 'processor_not_configured' })
		} finally {
			await bare.stop()
		}
	})
})

describe('the pricing page without processor keys', () => {
	test('a plan button answers 503 with reassurance and somewhere to turn, not jargon', async () => {
		const { STRIPE_SECRET_KEY: _s, STRIPE_WEBHOOK_SECRET: _w, ...env } = standIns.env
		const bare = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...env })
		try {
			const response = await postForm(
				`${bare.url}/pricing?interval=month`,
				{ intent: 'checkout', plan: 'team', interval: 'month' },
				{ ...auth(newClerkUserId()), Origin: bare.url },
			)
			expect(response.status).toBe(503)
			const html = await response.text()
			expect(html).not.toContain('Billing is not enabled on this server')
			expect(html).toContain('Nothing was started and nothing was charged.')
			expect(html).toMatch(/role="alert"[^>]*>[^]*<a href="\/contact">Contact support<\/a>[^]*<\/p>/)
		} finally {
			await bare.stop()
		}
	})
})

describe.runIf(inject('databaseKind') === 'postgres')('pages when the stored plan cannot be read', () => {
	test('pricing and account say so, rather than show a paying customer "Free"; the status API keeps its fallback', async () => {
		const databaseUrl = await freshDatabaseUrl()
		const own = await startApp({ ...appEnv, DATABASE_URL: databaseUrl })
		try {
			const userId = newClerkUserId()
			const headers = sessionHeaders(standIns.clerk, userId)
			// The user's row exists; then a column that only the plan's read needs goes missing under the app
			// (the sign-in's user read still works, as when one query of a page fails).
			expect((await fetch(`${own.url}/api/billing/status`, { headers })).status).toBe(200)
			await withDatabase(databaseUrl, (prisma) =>
				prisma.$executeRawUnsafe(`ALTER TABLE "Subscription" RENAME COLUMN "currentPeriodEnd" TO "currentPeriodEnd_away"`),
			)

			const account = await (await fetch(`${own.url}/account`, { headers })).text()
			expect(account).toContain('We could not load your plan and billing details just now.')
			expect(account).not.toContain('No subscription')
			expect(account).not.toContain('See plans')
			const pricing = await (await fetch(`${own.url}/pricing`, { headers })).text()
			expect(pricing).toContain('We could not load your current plan just now')
			// The API answers the contract's fallback (200, free/none) in the same state.
			const status = await fetch(`${own.url}/api/billing/status`, { headers })
			expect(status.status).toBe(200)
			expect(await status.json()).toMatchObject({ plan: 'free', status: 'none' })
		} finally {
			await own.stop()
		}
	})
})
