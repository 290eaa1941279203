import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { parseStripeForm } from '../mocks/stripe/form.js'
import { startFakeStripe, type FakeStripe } from '../mocks/stripe.js'
import { until } from '../support/deadline.js'

let fake: FakeStripe
let stripe: Stripe
// A stand-in app that records webhook deliveries, verifying them like the real app must.
const received: Array<{ type: string; verified: boolean }> = []
let app: http.Server

beforeAll(async () => {
	fake = await startFakeStripe({ webhookSecret: 'whsec_selftest' })
	stripe = new Stripe('sk_test_fake', {
		host: '127.0.0.1',
		port: fake.port,
		protocol: 'http',
		maxNetworkRetries: 0,
		timeout: 2000,
	})
	app = http.createServer((req, res) => {
		let raw = ''
		req.on('data', (c: Buffer) => (raw += c.toString('utf8')))
		req.on('end', () => {
			try {
				const event = stripe.webhooks.constructEvent(raw, String(req.headers['stripe-signature']), 'whsec_selftest')
				received.push({ type: event.type, verified: true })
				res.writeHead(200).end('{"received":true}')
			} catch {
				res.writeHead(400).end('{"code":"bad-signature"}')
			}
		})
	})
	await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
	fake.setWebhookUrl(`http://127.0.0.1:${(app.address() as AddressInfo).port}/api/billing/webhook`)
})
afterAll(async () => {
	await fake.close()
	app.closeAllConnections()
	await new Promise((r) => app.close(r))
})

test('form parser: brackets, indices, [] and nesting', () => {
	expect(parseStripeForm('a[b][0][c]=1&a[b][1][c]=2&x[]=p&x[]=q&m[k]=v&__proto__[p]=1')).toEqual({
		a: { b: [{ c: '1' }, { c: '2' }] },
		x: ['p', 'q'],
		m: { k: 'v' },
	})
})

describe('API via the real SDK', () => {
	test('a parameter the call does not take is 400 parameter_unknown, as at Stripe; expand is taken everywhere', async () => {
		const params = { email: 'a@example.test', userId: 'u_1' } as unknown as Stripe.CustomerCreateParams
		await expect(stripe.customers.create(params)).rejects.toMatchObject({ statusCode: 400, code: 'parameter_unknown', param: 'userId' })
		const customer = await stripe.customers.create({ email: 'a@example.test', expand: ['tax'] })
		expect(customer.email).toBe('a@example.test')
	})

	test('customers.create honours idempotency keys', async () => {
		const a = await stripe.customers.create({ email: 'a@example.test', metadata: { userId: 'u1' } }, { idempotencyKey: 'cust-u1' })
		const b = await stripe.customers.create({ email: 'a@example.test', metadata: { userId: 'u1' } }, { idempotencyKey: 'cust-u1' })
		expect(b.id).toBe(a.id)
		expect((await stripe.customers.retrieve(a.id)) as Stripe.Customer).toMatchObject({
			email: 'a@example.test',
		})
		await expect(stripe.customers.create({ email: 'other@example.test' }, { idempotencyKey: 'cust-u1' })).rejects.toBeInstanceOf(
			Stripe.errors.StripeIdempotencyError,
		)
	})

	test('unknown ids → StripeInvalidRequestError 404 resource_missing', async () => {
		await expect(stripe.subscriptions.retrieve('sub_nope')).rejects.toMatchObject({
			type: 'StripeInvalidRequestError',
			statusCode: 404,
			code: 'resource_missing',
		})
	})

	test('prices.list by lookup key', async () => {
		const prices = await stripe.prices.list({
			lookup_keys: ['team_year'],
			expand: ['data.product'],
		})
		expect(prices.data).toHaveLength(1)
		expect(prices.data[0]).toMatchObject({
			lookup_key: 'team_year',
			recurring: { interval: 'year' },
		})
		expect((prices.data[0]?.product as Stripe.Product).name).toBe('Team')
		expect(fake.requests.at(-1)?.params).toMatchObject({ lookup_keys: ['team_year'] })
	})

	test('checkout → hosted pay → subscription with item periods and signed webhooks', async () => {
		const customer = await stripe.customers.create({ email: 'pay@example.test' })
		const price = fake.priceFor('studio', 'month')
		const session = await stripe.checkout.sessions.create({
			mode: 'subscription',
			customer: customer.id,
			client_reference_id: 'uuid-1',
			line_items: [{ price: price.id, quantity: 1 }],
			metadata: { userId: 'uuid-1' },
			subscription_data: { metadata: { userId: 'uuid-1' }, trial_period_days: 14 },
			success_url: 'http://app.test/account?checkout=success&session_id={CHECKOUT_SESSION_ID}',
			cancel_url: 'http://app.test/pricing?checkout=canceled',
		})
		expect(session.url).toBe(`${fake.url}/checkout/${session.id}`)
		expect(fake.checkoutParams(session.id)).toMatchObject({
			subscription_data: { metadata: { userId: 'uuid-1' }, trial_period_days: '14' },
			line_items: [{ price: price.id, quantity: '1' }],
		})

		const pageHtml = await (await fetch(session.url ?? '')).text()
		expect(pageHtml).toContain('Fake Stripe Checkout')
		const paid = await fetch(`${fake.url}/checkout/${session.id}/pay`, {
			method: 'POST',
			redirect: 'manual',
		})
		expect(paid.status).toBe(303)
		expect(paid.headers.get('location')).toBe(`http://app.test/account?checkout=success&session_id=${session.id}`)
		expect(received.map((r) => r.type)).toEqual(['checkout.session.completed', 'customer.subscription.created'])

		const done = await stripe.checkout.sessions.retrieve(session.id, { expand: ['subscription'] })
		expect(done.status).toBe('complete')
		const sub = done.subscription as Stripe.Subscription
		expect(sub).toMatchObject({
			status: 'trialing',
			customer: customer.id,
			metadata: { userId: 'uuid-1' },
		})
		expect(sub).not.toHaveProperty('current_period_end')
		const item = sub.items.data[0]
		expect(item?.current_period_end).toBe(sub.trial_end)
		expect(item?.price.lookup_key).toBe('studio_month')
		const again = await stripe.subscriptions.retrieve(sub.id)
		expect(again.id).toBe(sub.id)
		const listed = await stripe.subscriptions.list({ customer: customer.id })
		expect(listed.data.map((s) => s.id)).toEqual([sub.id])
	})

	test('open checkouts are listed by status and expired, as at Stripe: an expired one cannot be paid, a paid one cannot be expired', async () => {
		const customer = await stripe.customers.create({ email: 'expire@example.test' })
		const open = (plan: 'solo' | 'team') =>
			stripe.checkout.sessions.create({
				mode: 'subscription',
				customer: customer.id,
				line_items: [{ price: fake.priceFor(plan, 'month').id, quantity: 1 }],
				success_url: 'http://app.test/account',
			})
		const [first, second] = [await open('solo'), await open('team')]
		await fetch(`${fake.url}/checkout/${second.id}/pay`, { method: 'POST', redirect: 'manual' })
		const listed = await stripe.checkout.sessions.list({ customer: customer.id, status: 'open' })
		expect(listed.data.map((s) => s.id)).toEqual([first.id])
		const expired = await stripe.checkout.sessions.expire(first.id)
		expect(expired).toMatchObject({ id: first.id, status: 'expired', url: null })
		expect((await fetch(`${fake.url}/checkout/${first.id}/pay`, { method: 'POST', redirect: 'manual' })).status).toBe(410)
		await expect(stripe.checkout.sessions.expire(second.id)).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400 })
		// Paged one at a time while each is expired: the cursor, no longer listed as open, pages on to the rest.
		const more = [await open('solo'), await open('team'), await open('solo')]
		const seen: string[] = []
		for await (const session of stripe.checkout.sessions.list({ customer: customer.id, status: 'open', limit: 1 })) {
			seen.push(session.id)
			await stripe.checkout.sessions.expire(session.id)
		}
		expect(seen).toEqual(more.map((s) => s.id).reverse())
	})

	test('billing portal session', async () => {
		const customer = await stripe.customers.create({})
		const portal = await stripe.billingPortal.sessions.create({
			customer: customer.id,
			return_url: 'http://app.test/account',
		})
		expect(portal.url).toBe(`${fake.url}/portal/${portal.id}`)
		expect(await (await fetch(portal.url)).text()).toContain('href="http://app.test/account"')
	})

	test('portal configurations: the account default is used unless a session names one; created ones never become the default', async () => {
		const local = await startFakeStripe({ seedPortalConfiguration: false })
		const client = new Stripe('sk_test_fake', { host: '127.0.0.1', port: local.port, protocol: 'http', maxNetworkRetries: 0 })
		try {
			const [accountDefault, ...others] = (await client.billingPortal.configurations.list()).data
			expect(others).toEqual([])
			expect(accountDefault).toMatchObject({ is_default: true, features: { subscription_update: { enabled: false } } })
			const ours = await client.billingPortal.configurations.create({
				features: { subscription_update: { enabled: true, default_allowed_updates: ['price'] } },
				metadata: { managedBy: 'selftest' },
			})
			expect(ours.is_default).toBe(false)
			expect((await client.billingPortal.configurations.list({ is_default: true })).data.map((c) => c.id)).toEqual([accountDefault!.id])

			const customer = (await client.customers.create({})).id
			const plain = await client.billingPortal.sessions.create({ customer })
			expect(plain.configuration).toBe(accountDefault!.id)
			const named = await client.billingPortal.sessions.create({ customer, configuration: ours.id })
			expect(named.configuration).toBe(ours.id)
			expect(local.store.get(named.id, 'billing_portal.session')).toMatchObject({ configuration: ours.id })
			await expect(client.billingPortal.sessions.create({ customer, configuration: 'bpc_gone' })).rejects.toMatchObject({
				type: 'StripeInvalidRequestError',
				code: 'resource_missing',
				param: 'configuration',
				message: "No such configuration: 'bpc_gone'",
			})
		} finally {
			await local.close()
		}
	})

	test('webhooks.constructEvent verifies signEvent output; a stale or wrong signature fails', () => {
		const sub = fake.createSubscription({
			customer: 'cus_x',
			plan: 'team',
			interval: 'year',
			userId: 'u9',
		})
		const event = fake.makeEvent('customer.subscription.updated', sub)
		const { payload, header } = fake.signEvent(event)
		const parsed = stripe.webhooks.constructEvent(payload, header, 'whsec_selftest')
		expect(parsed.id).toBe(event.id)
		expect(parsed.api_version).toBe(Stripe.API_VERSION)
		const stale = fake.signEvent(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 })
		expect(() => stripe.webhooks.constructEvent(stale.payload, stale.header, 'whsec_selftest')).toThrow(
			Stripe.errors.StripeSignatureVerificationError,
		)
		// Re-serialized JSON is not the signed text.
		expect(() => stripe.webhooks.constructEvent(JSON.stringify(JSON.parse(payload)), header, 'whsec_selftest')).toThrow(
			Stripe.errors.StripeSignatureVerificationError,
		)
	})

	test('makeInvoice: subscription under parent.subscription_details; retrievable', async () => {
		const sub = fake.createSubscription({ customer: 'cus_inv', plan: 'solo', userId: 'u2' })
		const invoice = fake.makeInvoice(sub.id, { paid: false })
		const event = fake.makeEvent('invoice.payment_failed', invoice)
		const { payload, header } = fake.signEvent(event)
		const parsed = stripe.webhooks.constructEvent(payload, header, 'whsec_selftest')
		const data = parsed.data.object as Stripe.Invoice
		expect(data.parent?.subscription_details?.subscription).toBe(sub.id)
		expect(data.status).toBe('open')
		const fetched = await stripe.invoices.retrieve(invoice.id ?? '')
		expect(fetched.amount_remaining).toBe(900)
		expect((await stripe.subscriptions.retrieve(sub.id)).latest_invoice).toBe(invoice.id)
	})

	test('fault modes', async () => {
		fake.setMode('error500')
		await expect(stripe.prices.list()).rejects.toBeInstanceOf(Stripe.errors.StripeAPIError)
		fake.setMode('hang')
		const quick = new Stripe('sk_test_fake', {
			host: '127.0.0.1',
			port: fake.port,
			protocol: 'http',
			maxNetworkRetries: 0,
			timeout: 200,
		})
		await expect(quick.prices.list()).rejects.toBeInstanceOf(Stripe.errors.StripeConnectionError)
		// A dropped connection (ECONNRESET) is retried once even with maxNetworkRetries: 0,
		// with the same Idempotency-Key.
		fake.setMode('reset')
		const before = fake.requests.length
		await expect(stripe.customers.create({})).rejects.toBeInstanceOf(Stripe.errors.StripeConnectionError)
		const attempts = fake.requests.slice(before)
		expect(attempts).toHaveLength(2)
		expect(attempts[1]?.idempotencyKey).toBe(attempts[0]?.idempotencyKey)
		fake.setMode('ok')
	})
})

test('close() cuts a hung request in flight: the pending call fails', async () => {
	const local = await startFakeStripe()
	// A client timeout longer than this test's own: only close() cutting the request can end the call.
	const client = new Stripe('sk_test_fake', {
		host: '127.0.0.1',
		port: local.port,
		protocol: 'http',
		maxNetworkRetries: 0,
		timeout: 60_000,
	})
	local.setMode('hang')
	const pending = client.customers.create({}).catch((e: unknown) => e)
	try {
		await until(() => local.requests.length > 0, 5000, 'the fake received the request')
	} finally {
		await local.close()
	}
	expect(local.requests[0]).toMatchObject({ method: 'POST', path: '/v1/customers' })
	expect(await pending).toBeInstanceOf(Stripe.errors.StripeConnectionError)
})
