import { randomUUID } from 'node:crypto'
import { beforeEach, describe, expect, test } from 'vitest'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { newClerkUserId } from '../support/sessions.ts'
import { until } from '../support/deadline.ts'
import { priceObject } from '../mocks/stripe/objects.ts'
import {
	openCheckouts,
	app,
	auth,
	checkout,
	deliverSlowly,
	pay,
	planOf,
	serveBillingApp,
	sessionIdOf,
	standIns,
	status,
	subscribedUser,
	subscriptionIdFor,
	twoTrialsSecondPending,
	userPayingTwice,
} from '../support/billing-app.ts'

// A customer holding several subscriptions (two checkout tabs, both paid): decision 0013.
serveBillingApp()

/** What the customer portal does in flexible billing mode: cancel_at at the period's end, the flag left false. */
function endTheFlexibleWay(sub: Record<string, unknown>) {
	const [item] = (sub.items as { data: Array<{ current_period_end: number }> }).data
	sub.billing_mode = { type: 'flexible', flexible: { proration_discounts: 'included' } }
	sub.cancel_at = item!.current_period_end
	sub.cancel_at_period_end = false
}

describe('several subscriptions of one customer', () => {
	// What the app tells the operator about the subscriptions these tests set up. (Lines of a degraded
	// path are allowed only in the test of that path.)
	beforeEach(() =>
		expectServerLog(
			/^billing: cancelled \S+, a second trial for user \S+ who keeps \S+$/,
			/^billing: ended the trial of \S+ at once: user \S+ already had a trial$/,
			/^billing: customer \S+ keeps \d+ live subscriptions \(/,
		),
	)
	test('two checkouts left open and both paid: one trial is cancelled at the processor, the other plan shows', async () => {
		const userId = newClerkUserId()
		const [first, second] = await openCheckouts(userId)
		const firstParams = standIns.stripe.checkoutParams(sessionIdOf(first!))!
		const secondParams = standIns.stripe.checkoutParams(sessionIdOf(second!))!
		// Both were opened before any subscription existed, so both offer the trial.
		expect((firstParams.subscription_data as Record<string, unknown>).trial_period_days).toBe('14')
		expect((secondParams.subscription_data as Record<string, unknown>).trial_period_days).toBe('14')

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
		const urls = await openCheckouts(userId)
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
		// The log and the HTTP answer travel apart: wait for the line rather than read it at once.
		const note = `keeps 2 live subscriptions (${newer.id}, ${older.id})`
		await until(() => app.output().includes(note), 5_000, 'the note to the operator')

		const canceled = standIns.stripe.setSubscriptionStatus(String(newer.id), 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing', has_subscription: true })

		// Any later event about the ended one changes nothing.
		const stale = standIns.stripe.makeEvent('customer.subscription.updated', { ...canceled, status: 'active' })
		expect((await standIns.stripe.deliver(stale)).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing' })
	})

	// With one subscription the state comes from the customer's list, read after the subscription itself:
	// that list is what must be slow for the delivery to hold the older state.
	test("a slow delivery whose list of the customer's one subscription was read before a cancellation never overwrites it", async () => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		const slow = (await deliverSlowly('customer.subscription.updated', standIns.stripe.store.get(id, 'subscription')!, '/v1/subscriptions'))
			.delivery
		const canceled = standIns.stripe.setSubscriptionStatus(id, 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: 'canceled' })
		expect((await slow).status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: 'canceled', plan: 'free', has_subscription: false })
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
		// Flexible billing mode (Stripe's default since 2025-09-30): the portal sets cancel_at, not the flag.
		['set it to end with the period in flexible billing mode', endTheFlexibleWay],
	])(
		'a user who %s in the portal (its event not yet here) and then pays the other open checkout keeps that subscription, billed at once',
		async (_, endFirst) => {
			const userId = newClerkUserId()
			const [first, second] = await openCheckouts(userId)
			await pay(first!)
			const customer = String(standIns.stripe.checkoutParams(sessionIdOf(first!))!.customer)
			const firstSubscription = standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!
			firstSubscription.created = Number(firstSubscription.created) - 60 // paid a minute before the other
			endFirst(firstSubscription)

			await pay(second!)
			const kept = standIns.stripe.store.all('subscription').find((s) => s.customer === customer && s.id !== firstSubscription.id)!
			// Not cancelled (nothing earlier is kept), and no second trial: billed from now on.
			expect(kept.status).toBe('active')
			expect(standIns.stripe.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${kept.id}`)).toBe(false)
			expect(await status(userId)).toMatchObject({ plan: 'team', status: 'active', has_subscription: true })
		},
	)

	test('a user who sets the first subscription to end while an event about it is being read, then pays the other tab, keeps that subscription without a second trial', async () => {
		const userId = newClerkUserId()
		const [first, second] = await openCheckouts(userId)
		const a = standIns.stripe.store.completeCheckout(sessionIdOf(first!)).subscription
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', a))).status).toBe(200)
		const slow = (await deliverSlowly('customer.subscription.updated', a, `/v1/subscriptions/${a.id}`)).delivery
		a.cancel_at_period_end = true // in the portal, while that read is on its way back…
		const b = standIns.stripe.store.completeCheckout(sessionIdOf(second!)).subscription // …then the other tab is paid
		b.created = Number(a.created) + 60
		expect((await slow).status).toBe(200)
		// Not cancelled as a repeated trial (the first is no longer kept), but billed from now on.
		expect(b.status).toBe('active')
		expect(Number(b.trial_end)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000))
	})

	test('a checkout opened before the first trial and paid after that trial was cancelled: the subscription stays, its trial ends at once', async () => {
		const userId = newClerkUserId()
		const [older, newer] = await openCheckouts(userId, ['broadcaster', 'team'])
		// The team checkout is paid first, and its trial cancelled…
		const first = standIns.stripe.store.completeCheckout(sessionIdOf(newer!)).subscription
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', first))).status).toBe(200)
		const ended = standIns.stripe.setSubscriptionStatus(String(first.id), 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', ended))).status).toBe(200)
		expect((await status(userId)).status).toBe('canceled')
		// …then the broadcaster tab, still open with its trial, is paid a minute later.
		const second = standIns.stripe.store.completeCheckout(sessionIdOf(older!)).subscription
		second.created = Number(first.created) + 60
		expect(second.status).toBe('trialing')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', second))).status).toBe(200)
		expect(second.status).toBe('active')
		expect(await status(userId)).toMatchObject({ plan: 'broadcaster', status: 'active', has_subscription: true })
	})

	test('a repeated trial another delivery cancelled first (Stripe then answers 404 to ours) is still a 200', async () => {
		const { userId, b } = await twoTrialsSecondPending()
		const { delivery: slow, seen } = await deliverSlowly('customer.subscription.created', b, '/v1/subscriptions')
		standIns.stripe.setSubscriptionStatus(String(b.id), 'canceled') // the other delivery's cancel lands first
		expect((await slow).status).toBe(200)
		expect(standIns.stripe.requests.slice(seen).filter((r) => r.method === 'DELETE')).toHaveLength(1)
		expect(await status(userId)).toMatchObject({ plan: 'solo', status: 'trialing' })
	})

	test('the user sets the subscription they keep to end just before a repeated trial is cancelled: that subscription stays, billed at once', async () => {
		const { userId, a, b } = await twoTrialsSecondPending()
		const { delivery: slow } = await deliverSlowly('customer.subscription.created', b, '/v1/subscriptions')
		a.cancel_at_period_end = true // in the portal, while the list (A kept) is on its way back
		expect((await slow).status).toBe(200)
		expect(b.status).toBe('active')
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'active' })
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

	test("another product's subscription on the same customer, newer and active, leaves the plan shown", async () => {
		const { userId, customer } = await subscribedUser('studio')
		const other = standIns.stripe.createSubscription({ customer, plan: 'lighting', status: 'active' })
		other.created = Number(other.created) + 60
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', other))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'studio', status: 'trialing', credits_daily: 1500, has_subscription: true })
		const again = await checkout(userId, { plan: 'team' })
		expect(again.status).toBe(409)
	})

	test("a trial of ours for a customer who keeps another product's subscription is not a repeated trial", async () => {
		const userId = newClerkUserId()
		const [url] = await openCheckouts(userId, ['team'])
		const customer = String(standIns.stripe.checkoutParams(sessionIdOf(url!))!.customer)
		const other = standIns.stripe.createSubscription({ customer, plan: 'lighting', status: 'active' })
		other.created = Number(other.created) - 60
		await pay(url!)
		const trial = standIns.stripe.store.all('subscription').find((s) => s.customer === customer && s.id !== other.id)!
		expect(trial.status).toBe('trialing')
		expect(await status(userId)).toMatchObject({ plan: 'team', status: 'trialing', has_subscription: true })
	})

	test('an item of another product listed before the plan (an add-on added in the Dashboard): the plan is read from its own item', async () => {
		const { userId, customer } = await subscribedUser('studio')
		const subscription = standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!
		const items = (subscription.items as { data: Array<Record<string, unknown>> }).data
		items.unshift({ ...structuredClone(items[0]!), id: 'si_addon', price: structuredClone(standIns.stripe.priceFor('lighting', 'month')) })
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
		expect(await status(userId)).toMatchObject({ plan: 'studio', status: 'trialing', credits_daily: 1500, has_subscription: true })
	})

	describe('a subscriber whose item an operator moved to a price our catalogue does not name (decision 0029)', () => {
		/** The user's shown subscription, active, its item moved to `price`, delivered; then cancelled, delivered. */
		async function movedThenCancelled(price: Record<string, unknown>) {
			const { userId, customer } = await subscribedUser('team', 'month')
			const subscription = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'active')
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
			;(subscription.items as { data: Array<Record<string, unknown>> }).data[0]!.price = structuredClone(price)
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
			const moved = {
				status: await status(userId),
				account: await (await fetch(`${app.url}/account`, { headers: auth(userId) })).text(),
				// A second checkout would bill the user twice: the one they have is still theirs.
				checkout: (await checkout(userId, { plan: 'solo' })).status,
			}
			const canceled = standIns.stripe.setSubscriptionStatus(String(subscription.id), 'canceled')
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
			return { moved, canceled: await status(userId), userId }
		}

		test('a custom price on our own product (no lookup key, no metadata): the plan stays, its amount is shown, and its cancellation ends it', async () => {
			const team = standIns.stripe.priceFor('team', 'month')
			const custom = standIns.stripe.store.put(priceObject({ product: String(team.product), unit_amount: 1_900, interval: 'month' }))
			const { moved, canceled } = await movedThenCancelled(custom)
			expect(moved.status).toMatchObject({ plan: 'team', status: 'active', credits_daily: 600, has_subscription: true })
			expect(moved.account).toContain('<dt>Plan</dt><dd>Team</dd><dt>Price</dt><dd>$19 a month</dd>')
			expect(moved.checkout).toBe(409)
			expect(canceled).toMatchObject({ plan: 'free', status: 'canceled', credits_daily: 20, has_subscription: false })
		})

		test('an event about an older subscription of ours, ended, does not show it in place of the moved one that still bills', async () => {
			const { userId, customer } = await subscribedUser('team', 'month')
			const subscription = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'active')
			const older = standIns.stripe.createSubscription({ customer, plan: 'solo', status: 'canceled' })
			older.created = Number(subscription.created) - 86_400
			;(subscription.items as { data: Array<Record<string, unknown>> }).data[0]!.price = structuredClone(
				standIns.stripe.priceFor('lighting', 'month'),
			)
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', older))).status).toBe(200)
			expect(await status(userId)).toMatchObject({ plan: 'team', status: 'active', has_subscription: true })
		})

		test("another product's price: the cancellation of the subscription the status shows still ends the plan", async () => {
			const { moved, canceled, userId } = await movedThenCancelled(standIns.stripe.priceFor('lighting', 'month'))
			// Until then it is the subscription the user was sold as Team: shown so, and held to it.
			expect(moved.status).toMatchObject({ plan: 'team', status: 'active', has_subscription: true })
			expect(moved.checkout).toBe(409)
			expect(canceled).toMatchObject({ plan: 'free', status: 'canceled', credits_daily: 20, has_subscription: false })
			expect((await checkout(userId, { plan: 'solo' })).status).toBe(200)
		})
	})

	test("another product's customer on the same processor account: its trials are never cancelled", async () => {
		expectServerLog(/^billing: webhook \S+ \(\S+\) names no known user; recorded and ignored$/)
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

	test('a late event about a customer deleted in the Dashboard never overwrites the live subscription of the customer that replaced it', async () => {
		expectServerLog(/^billing: customer \S+ of user \S+ is unknown to the processor/)
		const { userId, customer: first } = await subscribedUser('team')
		// Deleting the customer cancels its subscription; that event's delivery fails for now, and is retried later.
		const canceled = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(first), 'canceled')
		const late = standIns.stripe.makeEvent('customer.subscription.deleted', canceled)
		standIns.stripe.store.objects.delete(first)
		// The user subscribes again: checkout finds the customer gone and makes a new one.
		const opened = await checkout(userId, { plan: 'studio', interval: 'year' })
		expect(opened.status).toBe(200)
		await pay((await opened.json()).url)
		const subscribed = await status(userId)
		expect(subscribed).toMatchObject({ plan: 'studio', status: 'active', has_subscription: true })
		expect(subscribed.processor_customer_id).not.toBe(first)

		expect((await standIns.stripe.deliver(late)).status).toBe(200)
		expect(await status(userId)).toEqual(subscribed)
		const again = await checkout(userId, { plan: 'team' })
		expect(again.status).toBe(409)
		expect(await again.json()).toMatchObject({ code: 'already-subscribed' })
	})

	test('a processor API without the subscription list: events still take effect, decided from the one subscription', async () => {
		expectServerLog(/^billing: could not list the subscriptions of \S+; deciding from \S+ alone: /)
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
})
