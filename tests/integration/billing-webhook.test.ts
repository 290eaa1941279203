import path from 'node:path'
import zlib from 'node:zlib'
import Stripe from 'stripe'
import { describe, expect, inject, test } from 'vitest'
import { sessionCookie } from '../mocks/clerk.ts'
import type { StripeObject } from '../mocks/stripe.ts'
import { STRIPE_LIVE_KEY } from '../mocks/serve-all.ts'
import { startApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { projectRoot } from '../support/project.ts'
import { postJson } from '../support/http.ts'
import { FREE_STATUS } from '../support/status-payloads.ts'
import { newClerkUserId } from '../support/sessions.ts'
import {
	app,
	appEnv,
	auth,
	checkout,
	serveBillingApp,
	sessionIdOf,
	standIns,
	status,
	stored,
	subscribedUser,
	subscriptionIdFor,
} from '../support/billing-app.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'

/** The subscription's period end at the processor, as the status payload writes it. */
const periodEndOf = (subscription: StripeObject) =>
	new Date(Number((subscription.items as { data: StripeObject[] }).data[0]!.current_period_end) * 1000).toISOString()

/** Preloaded into a server whose wall clock a test steps back (SIGUSR2). */
const steppedClock = path.join(projectRoot, 'tests', 'support', 'stepped-clock.cjs')

// The webhook: who may call it, what it accepts, and how events take effect (once, newest wins).
serveBillingApp()

/** The note of signed deliveries refused (`bad-signature`), with their count. */
const refusedSignatureNote =
	/^billing: (\d+) signed webhook deliver(?:y|ies) refused since the last note \(400 bad-signature\): .*STRIPE_WEBHOOK_SECRET is not this endpoint's signing secret/

describe('POST /api/billing/webhook', () => {
	const webhookAt = (url: string, payload: string, header?: string) =>
		fetch(`${url}/api/billing/webhook`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json', ...(header ? { 'Stripe-Signature': header } : {}) },
			body: payload,
		})
	const webhook = (payload: string, header?: string) => webhookAt(app.url, payload, header)
	/** A signed delivery to the app at `url` (a test's own server). */
	const send = (url: string, signed: { payload: string; header: string }) => webhookAt(url, signed.payload, signed.header)
	/** A user who paid through a checkout the app at `url` opened: the processor has the subscription, the app has not heard of it. */
	const paidUnheard = async (url: string, userId: string) => {
		const opened = await postJson(`${url}/api/billing/checkout`, { plan: 'team' }, auth(userId))
		expect(opened.status).toBe(200)
		return standIns.stripe.store.completeCheckout(sessionIdOf((await opened.json()).url)).session
	}

	/** The processor's retry of `signed` to the app at `url` is accepted and settles paidUnheard's subscription. */
	const expectRetryApplied = async (url: string, signed: { payload: string; header: string }, userId: string) => {
		const retried = await send(url, signed)
		expect(retried.status).toBe(200)
		expect(await retried.json()).toEqual({ received: true })
		const state = await (await fetch(`${url}/api/billing/status`, { headers: auth(userId) })).json()
		expect(state).toMatchObject({ status: 'trialing', has_subscription: true, plan: 'team' })
	}

	test('a missing or wrong signature is 400 bad-signature and changes nothing; signed ones refused are noted once a minute, naming the secret', async () => {
		expectServerLog(refusedSignatureNote)
		const logFrom = app.output().length
		const { userId, customer } = await subscribedUser()
		const before = await status(userId)
		expect(before).toMatchObject({ status: 'trialing', has_subscription: true })
		// The processor has cancelled: an event the app accepted would show it (the state is read fresh).
		const sub = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'canceled')
		const event = standIns.stripe.makeEvent('customer.subscription.deleted', sub)
		const { payload } = standIns.stripe.signEvent(event)
		const refusals = [await webhook(payload), await webhook(payload, ' ')]
		const forged = standIns.stripe.signEvent(event, { secret: 'whsec_wrong' })
		refusals.push(await webhook(forged.payload, forged.header))
		// A tampered body under a valid signature header fails too.
		const signed = standIns.stripe.signEvent(event)
		refusals.push(
			await webhook(signed.payload.replace('"customer.subscription.deleted"', '"customer.subscription.updated"'), signed.header),
		)
		for (const response of refusals) {
			expect(response.status).toBe(400)
			expect(await response.json()).toEqual({ error: expect.any(String), code: 'bad-signature' })
		}
		expect(await status(userId)).toEqual(before)
		// Three refusals came with a signature header; the first is noted at once, the others wait for the next note.
		const notes = app
			.output()
			.slice(logFrom)
			.split('\n')
			.flatMap((line) => refusedSignatureNote.exec(line)?.[1] ?? [])
		expect(notes).toEqual(['1'])
		// The same event, correctly signed, is what would have changed it.
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: 'canceled', has_subscription: false })
	})

	test('without STRIPE_WEBHOOK_SECRET a correctly signed event is 503 processor_not_configured and is not applied', async () => {
		const { STRIPE_WEBHOOK_SECRET: _secret, ...env } = appEnv
		const unsigned = await startApp({ ...env, DATABASE_URL: await freshDatabaseUrl() })
		try {
			// A user of that app who paid: the processor has the subscription, the app has not heard of it.
			const userId = newClerkUserId()
			const opened = await postJson(`${unsigned.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))
			expect(opened.status).toBe(200)
			const { session } = standIns.stripe.store.completeCheckout(sessionIdOf((await opened.json()).url))
			const { payload, header } = standIns.stripe.signEvent(standIns.stripe.makeEvent('checkout.session.completed', session))
			const response = await fetch(`${unsigned.url}/api/billing/webhook`, {
				method: 'POST',
				headers: { 'Content-Type': 'application/json', 'Stripe-Signature': header },
				body: payload,
			})
			expect(response.status).toBe(503)
			expect(await response.json()).toEqual({ error: expect.any(String), code: 'processor_not_configured' })
			const state = await (await fetch(`${unsigned.url}/api/billing/status`, { headers: auth(userId) })).json()
			expect(state).toMatchObject({ status: 'none', has_subscription: false, processor_customer_id: session.customer })
		} finally {
			await unsigned.stop()
		}
	})

	test('with the signing secret but no STRIPE_SECRET_KEY, signatures are still checked, a signed event about a subscription is 503 until the key is set, one of an ignored kind 200', async () => {
		expectServerLog(refusedSignatureNote)
		const databaseUrl = await freshDatabaseUrl()
		// A user who paid while the app had its key.
		const userId = newClerkUserId()
		let server = await startApp({ ...appEnv, DATABASE_URL: databaseUrl })
		const session = await paidUnheard(server.url, userId)
		const event = standIns.stripe.makeEvent('checkout.session.completed', session)
		const signed = standIns.stripe.signEvent(event)
		await server.stop()

		// Restarted without the API key: a forged delivery is still a forgery (400), not a 503 to retry.
		const { STRIPE_SECRET_KEY: _key, ...withoutKey } = appEnv
		server = await startApp({ ...withoutKey, DATABASE_URL: databaseUrl })
		try {
			const forged = await send(server.url, standIns.stripe.signEvent(event, { secret: 'whsec_wrong' }))
			expect(forged.status).toBe(400)
			expect(await forged.json()).toEqual({ error: expect.any(String), code: 'bad-signature' })
			// The genuine one cannot be read through yet: 503, which the processor retries; nothing is recorded.
			const early = await send(server.url, signed)
			expect(early.status).toBe(503)
			expect(await early.json()).toEqual({ error: expect.any(String), code: 'processor_not_configured' })
			const state = await (await fetch(`${server.url}/api/billing/status`, { headers: auth(userId) })).json()
			expect(state).toMatchObject({ status: 'none', has_subscription: false })
			// A kind the service ignores needs no key: 200, not a 503 the processor would retry for days.
			const ignored = await send(
				server.url,
				standIns.stripe.signEvent(standIns.stripe.makeEvent('customer.created', { id: String(session.customer), object: 'customer' })),
			)
			expect(ignored.status).toBe(200)
			expect(await ignored.json()).toEqual({ received: true })
		} finally {
			await server.stop()
		}

		// The key is back: the processor's retry of the same delivery takes effect.
		server = await startApp({ ...appEnv, DATABASE_URL: databaseUrl })
		try {
			await expectRetryApplied(server.url, signed, userId)
		} finally {
			await server.stop()
		}
	})

	test('an event of the other mode than STRIPE_SECRET_KEY is 503 and not recorded; once the key matches, the retry takes effect', async () => {
		expectServerLog(
			/^billing: webhook \S+ \(checkout\.session\.completed\) is a live-mode event but STRIPE_SECRET_KEY is a test key; not recorded, the processor will retry it: set the key and the signing secret of one mode$/,
		)
		const databaseUrl = await freshDatabaseUrl()
		// A checkout opened and paid in live mode (the processor keeps the modes apart)…
		const userId = newClerkUserId()
		let server = await startApp({ ...appEnv, STRIPE_SECRET_KEY: STRIPE_LIVE_KEY, DATABASE_URL: databaseUrl })
		let session: StripeObject
		try {
			session = await paidUnheard(server.url, userId)
		} finally {
			await server.stop()
		}
		// …then the app runs on a test key (appEnv's) while the endpoint whose secret it holds sends live events.
		server = await startApp({ ...appEnv, DATABASE_URL: databaseUrl })
		try {
			const live = standIns.stripe.signEvent({ ...standIns.stripe.makeEvent('checkout.session.completed', session), livemode: true })
			const before = standIns.stripe.requests.length
			for (const attempt of [1, 2]) {
				const refused = await send(server.url, live)
				expect(refused.status, `delivery ${attempt}`).toBe(503)
				expect(await refused.json()).toEqual({ error: expect.any(String), code: 'processor_not_configured' })
			}
			// Not read with the wrong key, not recorded (the second delivery was not a duplicate), not applied.
			expect(standIns.stripe.requests.slice(before).filter((r) => r.path.startsWith('/v1/subscriptions'))).toEqual([])
			const state = await (await fetch(`${server.url}/api/billing/status`, { headers: auth(userId) })).json()
			expect(state).toMatchObject({ status: 'none', has_subscription: false })
			// A kind the service ignores needs no key, whatever its mode: 200.
			const ignored = standIns.stripe.signEvent({
				...standIns.stripe.makeEvent('customer.created', { id: String(session.customer), object: 'customer' }),
				livemode: true,
			})
			expect((await send(server.url, ignored)).status).toBe(200)
			await server.stop()

			// The operator sets the live key: the processor's retry of the same delivery takes effect.
			server = await startApp({ ...appEnv, STRIPE_SECRET_KEY: STRIPE_LIVE_KEY, DATABASE_URL: databaseUrl })
			await expectRetryApplied(server.url, live, userId)
		} finally {
			await server.stop()
		}
	})

	test('checkout.session.completed on its own answers 200 and settles the subscription the checkout created', async () => {
		const userId = newClerkUserId()
		const { url } = await (await checkout(userId, { plan: 'agency', interval: 'year' })).json()
		// Paid at the processor; of its events, only this one reaches the app.
		const { session, subscription } = standIns.stripe.store.completeCheckout(sessionIdOf(url))
		expect(await status(userId)).toMatchObject({ status: 'none', has_subscription: false })
		const delivery = await standIns.stripe.deliver(standIns.stripe.makeEvent('checkout.session.completed', session))
		expect(delivery.status).toBe(200)
		expect(JSON.parse(delivery.body)).toEqual({ received: true })
		expect(await status(userId)).toEqual({
			plan: 'agency',
			status: 'trialing',
			credits_daily: 4000,
			current_period_end: periodEndOf(subscription),
			processor_customer_id: session.customer,
			has_subscription: true,
		})
	})

	test("a checkout opened elsewhere on our price, naming a user in client_reference_id (as a Payment Link's address lets anyone), becomes no one's plan: not by its webhook, not by a link to its return address", async () => {
		const victim = newClerkUserId()
		const { url } = await (await checkout(victim, { plan: 'solo' })).json()
		const victimCustomer = standIns.stripe.store.get(String(standIns.stripe.checkoutParams(sessionIdOf(url))!.customer), 'customer')!
		const victimUuid = (victimCustomer.metadata as Record<string, string>).userId!
		// A stranger's checkout on our price, opened outside the app, paid with a customer of its own.
		const api = new URL(appEnv.STRIPE_API_URL!)
		const elsewhere = new Stripe(appEnv.STRIPE_SECRET_KEY!, { host: api.hostname, port: Number(api.port), protocol: 'http' })
		const opened = await elsewhere.checkout.sessions.create({
			mode: 'subscription',
			line_items: [{ price: standIns.stripe.priceFor('agency', 'month').id, quantity: 1 }],
			client_reference_id: victimUuid,
			success_url: 'https://elsewhere.example/thanks',
		})
		const { session } = standIns.stripe.store.completeCheckout(opened.id)
		expect(session.customer).not.toBe(victimCustomer.id)

		expectServerLog(/^billing: webhook \S+ \(checkout.session.completed\) names no known user; recorded and ignored$/)
		const page = await fetch(`${app.url}/account?checkout=success&session_id=${opened.id}`, { headers: auth(victim) })
		expect(page.status).toBe(200)
		const delivery = await standIns.stripe.deliver(standIns.stripe.makeEvent('checkout.session.completed', session))
		expect(delivery.status).toBe(200)
		expect(await status(victim)).toEqual({ ...FREE_STATUS, processor_customer_id: victimCustomer.id })
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

	test('a signed event sent as anything but application/json is 400 bad-body and changes nothing; a forged one stays bad-signature', async () => {
		// Its forged deliveries are refused signatures: noted once a minute, so here too once the last
		// note (another test's, on this server) is a minute old.
		expectServerLog(refusedSignatureNote)
		const { customer, userId } = await subscribedUser()
		const event = standIns.stripe.makeEvent(
			'customer.subscription.updated',
			standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'past_due'),
		)
		const signed = standIns.stripe.signEvent(event)
		const deliver = (contentType: string | null, header = signed.header) =>
			fetch(`${app.url}/api/billing/webhook`, {
				method: 'POST',
				headers: { ...(contentType ? { 'Content-Type': contentType } : {}), 'Stripe-Signature': header },
				// Bytes, not a string: fetch would label a string text/plain itself.
				body: new TextEncoder().encode(signed.payload),
			})
		for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', null]) {
			const response = await deliver(contentType)
			expect(response.status, String(contentType)).toBe(400)
			expect(await response.json(), String(contentType)).toEqual({
				error: expect.any(String),
				code: 'bad-body',
				detail: expect.stringMatching(/Content-Type|UTF-8/),
				issues: [],
			})
		}
		const forged = await deliver('text/plain', 't=1,v1=forged')
		expect(forged.status).toBe(400)
		expect(await forged.json()).toMatchObject({ code: 'bad-signature' })
		// Compressed (the processor never sends that): judged after the signature as well, so a forged one
		// is bad-signature; the signature covers the bytes as sent, which cannot be read here.
		for (const header of ['t=1,v1=forged', signed.header]) {
			const compressed = await fetch(`${app.url}/api/billing/webhook`, {
				method: 'POST',
				headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Stripe-Signature': header },
				body: new Uint8Array(zlib.gzipSync(signed.payload)),
			})
			expect(compressed.status).toBe(400)
			expect(await compressed.json()).toMatchObject({ code: 'bad-signature' })
		}
		expect(await stored((prisma) => prisma.webhookEvent.count({ where: { id: event.id as string } }))).toBe(0)
		expect(await status(userId)).toMatchObject({ status: 'trialing' })
		// Sent as the processor sends it, the same delivery takes effect.
		const accepted = await deliver('application/json; charset=utf-8')
		expect(accepted.status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: 'past_due' })
	})

	test('a signed event of a kind we ignore is 200 however little it carries; recorded once when it has an id', async () => {
		const id = `evt_ignored_${crypto.randomUUID().replaceAll('-', '')}`
		const bodies = [
			JSON.stringify({ id, type: 'customer.created' }), // no data at all
			JSON.stringify({ id, type: 'customer.created', data: {} }), // the same event again, with no object
			JSON.stringify({ type: 'product.updated' }), // no id: nothing to record under
			JSON.stringify({ id: 'evt_\u0000', type: 'charge.succeeded', data: { object: {} } }), // an id no database keeps
		]
		const before = await stored((prisma) => prisma.webhookEvent.count())
		for (const body of bodies) {
			const signed = standIns.stripe.signEvent(body)
			const response = await webhook(signed.payload, signed.header)
			expect(response.status, body).toBe(200)
			expect(await response.json(), body).toEqual({ received: true })
		}
		expect(await stored((prisma) => prisma.webhookEvent.findMany({ where: { id }, select: { id: true, type: true } }))).toEqual([
			{ id, type: 'customer.created' },
		])
		expect(await stored((prisma) => prisma.webhookEvent.count())).toBe(before + 1)
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
		await until(() => app.output().includes('sub_not_in_this_account, unknown to the processor'), 5_000, 'the warning')
		// (Read before the ledger: on the embedded database, reading it restarts the app with a new log.)
		expect(await stored((prisma) => prisma.webhookEvent.count({ where: { id: event.id } }))).toBe(1)
		// Recorded, so the repeat is a duplicate: the processor is not asked about it again.
		const before = standIns.stripe.requests.length
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect(standIns.stripe.requests.slice(before).filter((r) => r.path === '/v1/subscriptions/sub_not_in_this_account')).toEqual([])
		expect((await status(userId)).has_subscription).toBe(true) // the user's own subscription is untouched
	})

	test('a stale signature timestamp is 400, and a huge payload is 413', async () => {
		expectServerLog(refusedSignatureNote)
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
	// Readings were stamped by the instance's own clock: after a step back (an NTP correction; or another
	// instance whose clock is behind), the cancellation's reading was older than the one stored, so it was
	// answered 200 and dropped, and the user stayed "past_due" for good (no event follows a cancellation).
	// PostgreSQL only: the embedded database runs in the server's process, and its clock is that process's.
	test.runIf(inject('databaseKind') === 'postgres')(
		"a cancellation read after the server's clock stepped back still takes effect: readings are ordered by the database's clock",
		async () => {
			const server = await startApp({ ...appEnv, DATABASE_URL: await freshDatabaseUrl() }, { nodeArgs: ['--require', steppedClock] })
			try {
				const userId = newClerkUserId()
				const id = String((await paidUnheard(server.url, userId)).subscription)
				const pastDue = standIns.stripe.signEvent(
					standIns.stripe.makeEvent('customer.subscription.updated', standIns.stripe.setSubscriptionStatus(id, 'past_due')),
				)
				expect((await send(server.url, pastDue)).status).toBe(200)
				// A session token valid on both sides of the step.
				const issuedAt = Math.floor(Date.now() / 1000) - 60
				const session = { Cookie: sessionCookie(standIns.clerk.sign({ sub: userId, iat: issuedAt, nbf: issuedAt })) }
				const state = () => fetch(`${server.url}/api/billing/status`, { headers: session }).then((r) => r.json())
				expect(await state()).toMatchObject({ status: 'past_due' })

				server.process.kill('SIGUSR2') // its wall clock 30 s back
				await until(() => server.output().includes('test clock: stepped back to -30 s'), 5_000, 'the step back')
				const canceled = standIns.stripe.signEvent(
					standIns.stripe.makeEvent('customer.subscription.deleted', standIns.stripe.setSubscriptionStatus(id, 'canceled')),
				)
				expect((await send(server.url, canceled)).status).toBe(200)
				expect(await state()).toMatchObject({ status: 'canceled', plan: 'free', has_subscription: false })
			} finally {
				await server.stop()
			}
		},
	)
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

	test('invoice.paid shows active, invoice.payment_failed past_due, and a paid retry active again; the plan is kept', async () => {
		const { userId, customer } = await subscribedUser('studio', 'year')
		const id = subscriptionIdFor(customer)
		const { stripe } = standIns
		const subscribed = {
			plan: 'studio',
			credits_daily: 1500,
			current_period_end: periodEndOf(stripe.store.get(id)!),
			processor_customer_id: customer,
			has_subscription: true,
		}
		const steps = [
			['active', 'invoice.paid', 'active'], // the trial ends and the first invoice is paid
			['past_due', 'invoice.payment_failed', 'past_due'], // the renewal's card is declined
			['active', 'invoice.paid', 'active'], // the processor's retry is paid
		] as const
		for (const [processorStatus, type, shown] of steps) {
			stripe.setSubscriptionStatus(id, processorStatus)
			const invoice = stripe.makeInvoice(id, { paid: type === 'invoice.paid' })
			const delivery = await stripe.deliver(stripe.makeEvent(type, invoice))
			expect(delivery.status, type).toBe(200)
			expect(JSON.parse(delivery.body)).toEqual({ received: true })
			expect(await status(userId), type).toEqual({ ...subscribed, status: shown })
		}
	})

	test.each([
		['invoice.paid', 'active', 'past_due'],
		['invoice.payment_failed', 'past_due', 'active'],
	] as const)('%s delivered again changes nothing the second time', async (type, first, later) => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		const { stripe } = standIns
		stripe.setSubscriptionStatus(id, first)
		const event = stripe.makeEvent(type, stripe.makeInvoice(id, { paid: type === 'invoice.paid' }))
		expect((await stripe.deliver(event)).status).toBe(200)
		const applied = await status(userId)
		expect(applied.status).toBe(first)
		// The processor has moved on; the same event id again must not take effect a second time.
		stripe.setSubscriptionStatus(id, later)
		const seen = stripe.requests.length
		const repeat = await stripe.deliver(event)
		expect(repeat.status).toBe(200)
		expect(JSON.parse(repeat.body)).toEqual({ received: true })
		expect(await status(userId)).toEqual(applied)
		expect(stripe.requests.slice(seen).filter((r) => r.path.startsWith('/v1/subscriptions'))).toEqual([])
		// A new event (another id) about the same invoice does read the processor's state again.
		expect((await stripe.deliver(stripe.makeEvent(type, event.data.object))).status).toBe(200)
		expect((await status(userId)).status).toBe(later)
	})

	test('an invoice.paid delivered after a later failed payment does not bring back active: the processor decides', async () => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		const { stripe } = standIns
		stripe.setSubscriptionStatus(id, 'active')
		const paidEarlier = stripe.makeEvent('invoice.paid', stripe.makeInvoice(id, { paid: true }), { created: 1_800_000_000 })
		stripe.setSubscriptionStatus(id, 'past_due')
		const failedLater = stripe.makeEvent('invoice.payment_failed', stripe.makeInvoice(id, { paid: false }), { created: 1_800_000_060 })
		expect((await stripe.deliver(failedLater)).status).toBe(200)
		expect((await status(userId)).status).toBe('past_due')
		expect((await stripe.deliver(paidEarlier)).status).toBe(200)
		expect(await status(userId)).toMatchObject({ status: 'past_due', has_subscription: true })
	})

	test('invoice events refresh the subscription they belong to', async () => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		standIns.stripe.setSubscriptionStatus(id, 'past_due')
		const invoice = standIns.stripe.makeInvoice(id, { paid: false })
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('invoice.payment_failed', invoice))).status).toBe(200)
		expect((await status(userId)).status).toBe('past_due')
	})

	test("an invoice event in an older API version's shape (subscription at the top level) moves the status too", async () => {
		const { userId, customer } = await subscribedUser()
		const id = subscriptionIdFor(customer)
		standIns.stripe.setSubscriptionStatus(id, 'past_due')
		// An endpoint created before 2025-03-31 is sent invoices without `parent`, naming the subscription directly.
		const { parent: _parent, ...invoice } = standIns.stripe.makeInvoice(id, { paid: false })
		expect(
			(await standIns.stripe.deliver(standIns.stripe.makeEvent('invoice.payment_failed', { ...invoice, subscription: id }))).status,
		).toBe(200)
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

	test('a failure after the ledger entry rolls the whole event back: 500, nothing recorded, and the redelivery applies it once', async () => {
		expectServerLog(/^billing: webhook \S+ \(\S+\) failed; the processor will retry: .*subscription writes refused/)
		const { userId, customer } = await subscribedUser()
		const event = standIns.stripe.makeEvent(
			'customer.subscription.updated',
			standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'past_due'),
		)
		// The database refuses the effect's write, inside the transaction that already holds the ledger row.
		const sql = (statements: string[]) =>
			stored(async (prisma) => {
				for (const statement of statements) await prisma.$executeRawUnsafe(statement)
			})
		await sql([
			`CREATE FUNCTION refuse_subscription_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'subscription writes refused'; END $$`,
			`CREATE TRIGGER refuse_subscription_writes BEFORE INSERT OR UPDATE ON "Subscription" FOR EACH ROW EXECUTE FUNCTION refuse_subscription_writes()`,
		])
		try {
			const failed = await standIns.stripe.deliver(event)
			expect(failed.status).toBe(500)
			expect(JSON.parse(failed.body)).toEqual({ error: expect.any(String), code: 'server-error' })
			expect((await status(userId)).status).toBe('trialing')
		} finally {
			await sql([`DROP TRIGGER refuse_subscription_writes ON "Subscription"`, `DROP FUNCTION refuse_subscription_writes()`])
		}
		// The ledger row went with the failed effect, so the processor's retry is not taken for a duplicate.
		const ledgerRows = () => stored((prisma) => prisma.webhookEvent.count({ where: { id: event.id } }))
		expect(await ledgerRows()).toBe(0)
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect((await status(userId)).status).toBe('past_due')
		expect(await ledgerRows()).toBe(1)
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
		const ledger = await stored((prisma) => prisma.webhookEvent.findMany({ where: { id: event.id } }))
		expect(ledger.map((row) => row.type)).toEqual(['customer.subscription.updated'])
		// …and a further delivery is known as done before the processor is asked again.
		const before = standIns.stripe.requests.length
		expect((await standIns.stripe.deliver(event)).status).toBe(200)
		expect(standIns.stripe.requests.slice(before).filter((r) => r.path === `/v1/subscriptions/${subscriptionId}`)).toEqual([])
	})
})
