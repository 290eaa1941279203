import { describe, expect, test } from 'vitest'
import { readStored } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { app, appEnv, replaceApp, serveBillingApp, standIns, status, subscribedUser, subscriptionIdFor } from '../support/billing-app.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'

// The webhook: who may call it, what it accepts, and how events take effect (once, newest wins).
serveBillingApp()

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
			// contract.md: every bad-body answer carries `detail` and `issues`.
			expect(await response.json(), body).toEqual({
				error: expect.any(String),
				code: 'bad-body',
				detail: expect.stringMatching(/\S/),
				issues: expect.any(Array),
			})
		}
	})

	test('an event naming a subscription the processor does not know is recorded and answered 200, once', async () => {
		expectServerLog(
			/^billing: webhook \S+ \(customer\.subscription\.deleted\) names subscription \S+, unknown to the processor; recorded and ignored$/,
		)
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
		expectServerLog(/^billing: webhook \S+ \(\S+\) names no known user; recorded and ignored$/)
		const stranger = standIns.stripe.createCustomer()
		const sub = standIns.stripe.createSubscription({ customer: String(stranger.id), plan: 'team' })
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', sub))).status).toBe(200)
		const ignored = await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.created', stranger))
		expect(ignored.status).toBe(200)
		expect(JSON.parse(ignored.body)).toEqual({ received: true })
	})

	test('the processor failing while we refresh answers 500, and the retried event then succeeds', async () => {
		expectServerLog(/^billing: webhook \S+ \(\S+\) failed; the processor will retry: /)
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
		replaceApp(read.app)
		standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
		expect(read.value.map((row) => row.type)).toEqual(['customer.subscription.updated'])
		// …and a further delivery is known as done before the processor is asked again.
		const before = standIns.stripe.requests.length
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect(standIns.stripe.requests.slice(before).filter((r) => r.path === `/v1/subscriptions/${subscriptionId}`)).toEqual([])
	})
})
