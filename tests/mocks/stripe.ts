// A node:http fake of the Stripe API (version 2026-10-28.endive) for the real `stripe` SDK:
//   new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, timeout: 2000 })
// plus hosted Checkout/portal pages and signed webhook delivery. No stripe-mock exists offline.
import { listen, randomId, readBody, sendJson, type FaultMode } from './http-util.js'
import { handleApi } from './stripe/api.js'
import { deliverEvent, makeEvent, signEvent, type Delivery, type SignOptions, type StripeEvent } from './stripe/events.js'
import { parseStripeForm, type FormObject } from './stripe/form.js'
import { handleHosted } from './stripe/hosted.js'
import { invoiceObject } from './stripe/invoice.js'
import { STRIPE_API_VERSION, type Interval, type StripeObject, type SubscriptionStatus } from './stripe/objects.js'
import { StripeStore, type SeedSubscription } from './stripe/store.js'

export { STRIPE_API_VERSION, type StripeEvent, type StripeObject }

export interface FakeStripeOptions {
	webhookSecret?: string
	/** Where hosted-checkout payments send events. Defaults to `${appUrl}/api/billing/webhook`. */
	webhookUrl?: string
	appUrl?: string
	/** Seed a price per plan × interval with lookup key `<plan>_<interval>` (default true). */
	seedPrices?: boolean
	/**
	 * Seed the portal configuration `npm run billing:sync` creates (default: as seedPrices), so the
	 * account is one the sync has run on. The account's own default configuration is always there.
	 */
	seedPortalConfiguration?: boolean
	/** When set, any other API key gets Stripe's 401 (several: an account's test and live keys). */
	secretKey?: string | string[]
}

export interface RecordedRequest {
	method: string
	path: string
	params: FormObject
	idempotencyKey: string | undefined
	stripeVersion: string | undefined
}

export interface FakeStripe {
	url: string
	port: number
	webhookSecret: string
	requests: RecordedRequest[]
	deliveries: Delivery[]
	store: StripeStore
	setMode(mode: FaultMode): void
	/** Answers each API call this many ms late; the answer is what the store held when the call arrived. */
	setLatency(ms: number): void
	/** Calls whose `METHOD /path?query` matches get Stripe's answer to an unknown URL (404): an API without that call. */
	setUnsupported(pattern: RegExp | null): void
	/**
	 * The next `times` calls whose `METHOD /path` matches fail as in error500 mode (a 500, saved under
	 * their idempotency key and replayed, as Stripe does); the others are answered as usual. With
	 * `afterApplying`, each is carried out first and then answered 500: a failure at Stripe that still
	 * made the object.
	 */
	failNext(pattern: RegExp, times?: number, options?: { afterApplying?: boolean }): void
	setWebhookUrl(url: string | undefined): void
	createCustomer(fields?: Partial<StripeObject>): StripeObject
	createSubscription(seed: SeedSubscription): StripeObject
	setSubscriptionStatus(id: string, status: SubscriptionStatus): StripeObject
	priceFor(plan: string, interval: Interval): StripeObject
	/** Stores and returns an invoice for the subscription (for invoice.paid / payment_failed). */
	makeInvoice(subscriptionId: string, opts?: { paid?: boolean; billingReason?: string }): StripeObject
	/** Parsed params of a checkout session's create request. */
	checkoutParams(sessionId: string): FormObject | undefined
	makeEvent: typeof makeEvent
	signEvent(event: StripeEvent | string, opts?: SignOptions): { payload: string; header: string }
	/** Signs and POSTs one event to the webhook URL; resolves with the app's answer. */
	deliver(event: StripeEvent): Promise<Delivery>
	close(): Promise<void>
}

interface Replay {
	fingerprint: string
	status: number
	body: unknown
}

export async function startFakeStripe(opts: FakeStripeOptions = {}): Promise<FakeStripe> {
	const webhookSecret = opts.webhookSecret ?? `whsec_test_${randomId(32)}`
	let webhookUrl = opts.webhookUrl ?? (opts.appUrl ? `${opts.appUrl}/api/billing/webhook` : undefined)
	let mode: FaultMode = 'ok'
	let latencyMs = 0
	let unsupported: RegExp | null = null
	let failing: { pattern: RegExp; times: number; afterApplying: boolean } | null = null
	const store = new StripeStore()
	if (opts.seedPrices !== false) store.seedPlans()
	if (opts.seedPortalConfiguration ?? opts.seedPrices !== false) store.seedSyncedPortalConfiguration()
	const requests: RecordedRequest[] = []
	const deliveries: Delivery[] = []
	const replays = new Map<string, Replay>()
	let fakeUrl = ''

	async function deliver(event: StripeEvent): Promise<Delivery> {
		if (!webhookUrl) {
			const skipped = { event, url: '', status: null, body: '', error: 'no webhook URL set' }
			deliveries.push(skipped)
			return skipped
		}
		const delivery = await deliverEvent(webhookUrl, event, webhookSecret)
		deliveries.push(delivery)
		return delivery
	}

	const listening = await listen(async (req, res) => {
		const url = new URL(req.url ?? '/', 'http://localhost')
		const method = req.method ?? 'GET'
		const body = method === 'GET' ? '' : await readBody(req)
		const params = parseStripeForm(method === 'GET' || method === 'DELETE' ? url.searchParams : body)
		const header = (name: string) => {
			const value = req.headers[name]
			return Array.isArray(value) ? value[0] : value
		}
		const idempotencyKey = header('idempotency-key')
		const livemode = /^Bearer (sk|rk)_live_/.test(header('authorization') ?? '')
		requests.push({
			method,
			path: url.pathname,
			params,
			idempotencyKey,
			stripeVersion: header('stripe-version'),
		})

		if (!url.pathname.startsWith('/v1/')) {
			const handled = await handleHosted(req, res, url.pathname, {
				store,
				deliver: async (events) => {
					for (const event of events) await deliver(event)
				},
			})
			if (!handled) sendJson(res, 404, { error: { type: 'invalid_request_error', message: 'Not found' } })
			return
		}
		if (mode === 'hang') return
		if (mode === 'reset') return void req.socket.destroy()
		const failsHere = failing !== null && failing.times > 0 && failing.pattern.test(`${method} ${url.pathname}`)
		if (failsHere) failing!.times--
		if (failsHere && failing!.afterApplying) handleApi({ store, fakeUrl, params, livemode }, method, url.pathname)
		if (mode === 'error500' || failsHere) {
			const failure = { error: { type: 'api_error', message: 'An unknown error occurred (fake Stripe error500 mode).' } }
			// Stripe saves the result of a request that started executing under its idempotency key,
			// "including 500 errors", and replays it for 24 hours.
			if (method === 'POST' && idempotencyKey && !replays.has(idempotencyKey)) {
				replays.set(idempotencyKey, { fingerprint: JSON.stringify([method, url.pathname, params]), status: 500, body: failure })
			}
			return sendJson(res, 500, failure)
		}
		const responseHeaders = {
			'Request-Id': `req_${randomId(14)}`,
			'Stripe-Version': header('stripe-version') ?? STRIPE_API_VERSION,
			...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
		}
		const key = header('authorization')?.replace(/^Bearer /, '')
		if (!key || (opts.secretKey && ![opts.secretKey].flat().includes(key))) {
			return sendJson(
				res,
				401,
				{
					error: {
						type: 'invalid_request_error',
						message: key ? `Invalid API Key provided: ${key.slice(0, 8)}***` : 'You did not provide an API key.',
					},
				},
				responseHeaders,
			)
		}
		// Stripe replays the first result of a POST for the same key, and refuses the key with
		// different params. Executed requests are saved, as Stripe documents: here the 2xx ones, and the
		// 500s of error500 mode and failNext (above).
		const fingerprint = JSON.stringify([method, url.pathname, params])
		const replay = method === 'POST' && idempotencyKey ? replays.get(idempotencyKey) : undefined
		if (replay && replay.fingerprint !== fingerprint) {
			return sendJson(
				res,
				400,
				{
					error: {
						type: 'idempotency_error',
						message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
					},
				},
				responseHeaders,
			)
		}
		if (replay)
			return sendJson(res, replay.status, replay.body, {
				...responseHeaders,
				'Idempotent-Replayed': 'true',
			})
		if (unsupported?.test(`${method} ${url.pathname}${url.search}`)) {
			const message = `Unrecognized request URL (${method}: ${url.pathname}).`
			return sendJson(res, 404, { error: { type: 'invalid_request_error', message } }, responseHeaders)
		}
		const result = handleApi({ store, fakeUrl, params, livemode }, method, url.pathname)
		if (method === 'POST' && idempotencyKey && result.status < 300) {
			replays.set(idempotencyKey, { fingerprint, ...result })
		}
		if (latencyMs > 0) {
			const body = JSON.stringify(result.body) // what was true on arrival, not on sending
			await new Promise((resolve) => setTimeout(resolve, latencyMs))
			return sendJson(res, result.status, JSON.parse(body), responseHeaders)
		}
		sendJson(res, result.status, result.body, responseHeaders)
	})
	fakeUrl = listening.url

	return {
		url: listening.url,
		port: listening.port,
		webhookSecret,
		requests,
		deliveries,
		store,
		setMode: (next) => void (mode = next),
		setLatency: (ms) => void (latencyMs = ms),
		setUnsupported: (pattern) => void (unsupported = pattern),
		failNext: (pattern, times = 1, { afterApplying = false } = {}) => void (failing = { pattern, times, afterApplying }),
		setWebhookUrl: (next) => void (webhookUrl = next),
		createCustomer: (fields) => store.createCustomer(fields),
		createSubscription: (seed) => store.createSubscription(seed),
		setSubscriptionStatus: (id, status) => store.setSubscriptionStatus(id, status),
		priceFor: (plan, interval) => store.ensurePrice(plan, interval),
		makeInvoice(subscriptionId, invoiceOpts) {
			const sub = store.get(subscriptionId, 'subscription')
			if (!sub) throw new Error(`fake stripe: no subscription ${subscriptionId}`)
			const invoice = store.put(invoiceObject(sub, invoiceOpts))
			sub.latest_invoice = invoice.id
			return invoice
		},
		checkoutParams: (id) => store.checkoutParams.get(id),
		makeEvent,
		signEvent: (event, signOpts) => signEvent(event, webhookSecret, signOpts),
		deliver,
		close: listening.close,
	}
}
