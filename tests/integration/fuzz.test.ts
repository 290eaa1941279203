import crypto from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl, readStored } from '../support/database.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { postJson } from '../support/http.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

// Thousands of generated bodies against every /api/* route and every page form: the answer is always
// JSON (API) with a contract code, never a 500 for bad input, never a stack trace or a secret, and the
// server stays up.
let standIns: StandIns
let app: RunningApp
let appEnv: Record<string, string>
let secrets: string[]
const userId = newClerkUserId()
const FUZZ_EMAIL = 'fuzz@example.com'

/**
 * A signed-in user of their own for one generated request: one user for all of them would reach the
 * per-user limits after a few valid bodies, and every later answer would be the limit's 429.
 */
function freshUser() {
	const id = newClerkUserId()
	standIns.clerkApi.setUser({ id, email: FUZZ_EMAIL })
	return id
}

const CODES = new Set([
	'bad-body',
	'email-mismatch',
	'bad-signature',
	'unauthorized',
	'not-found',
	'no-customer',
	'method-not-allowed',
	'already-subscribed',
	'payload-too-large',
	'rate-limited',
	'identity-provider-unavailable',
	'processor_not_configured',
])

beforeAll(async () => {
	standIns = await startStandIns()
	appEnv = { DATABASE_URL: await freshDatabaseUrl(), TRUST_PROXY: '1', ...standIns.env }
	app = await startApp(appEnv)
	standIns.clerkApi.setUser({ id: userId, email: FUZZ_EMAIL })
	secrets = [standIns.env.CLERK_SECRET_KEY!, standIns.env.STRIPE_SECRET_KEY!, standIns.env.STRIPE_WEBHOOK_SECRET!]
})
afterAll(async () => {
	await app?.stop()
	await standIns?.close()
})

const edgeStrings = fc.oneof(
	fc.string({ unit: 'grapheme', maxLength: 40 }),
	fc.string({ unit: 'binary', maxLength: 40 }),
	fc.constantFrom(
		'',
		' ',
		'\u0000',
		'\u202e\u202d',
		'\ud800',
		'\udfff',
		'a\r\nBcc: x@y.z',
		'<script>alert(1)</script>',
		'𝓤𝓷𝓲𝓬𝓸𝓭𝓮',
		'ada@example.com',
		'fuzz@example.com', // the users' own email: a deletion request that is filed
		'team',
		'year',
		'x'.repeat(20_000),
	),
)
const anyValue = fc.oneof(
	edgeStrings,
	fc.integer(),
	fc.double(),
	fc.boolean(),
	fc.constant(null),
	fc.array(edgeStrings, { maxLength: 3 }),
	fc.dictionary(edgeStrings, edgeStrings, { maxKeys: 3 }),
)
const contractKeys = fc.constantFrom(
	'name',
	'email',
	'subject',
	'message',
	'plan',
	'interval',
	'confirmEmail',
	'reason',
	'__proto__',
	'constructor',
	'prototype',
)

/** A raw body and its content type: mostly JSON objects near the contract, plus every kind of garbage. */
const body = fc.oneof(
	{
		weight: 5,
		arbitrary: fc.dictionary(contractKeys, anyValue, { maxKeys: 6 }).map((o) => ({ text: JSON.stringify(o), type: 'application/json' })),
	},
	{ weight: 2, arbitrary: fc.json().map((text) => ({ text, type: 'application/json' })) },
	{
		weight: 1,
		arbitrary: fc
			.constantFrom(
				'{"__proto__":{"isAdmin":true},"plan":"team"}',
				'{"constructor":{"prototype":{"x":1}}}',
				'['.repeat(5000) + ']'.repeat(5000),
				'{"a":',
				'null',
				'"str"',
				'1e999',
				'',
			)
			.map((text) => ({ text, type: 'application/json' })),
	},
	{
		weight: 1,
		arbitrary: fc
			.tuple(
				edgeStrings,
				fc.constantFrom(
					'text/plain',
					'application/x-www-form-urlencoded',
					'multipart/form-data; boundary=x',
					'application/xml',
					'application/json; charset=latin1',
					'application/jsonx',
				),
			)
			.map(([text, type]) => ({ text, type })),
	},
	{
		weight: 1,
		arbitrary: fc
			.integer({ min: 64 * 1024 - 10, max: 80 * 1024 })
			.map((size) => ({ text: JSON.stringify({ message: 'x'.repeat(size) }), type: 'application/json' })),
	},
)

async function expectSafeJson(response: Response, { allowServerError = false } = {}) {
	const text = await response.text()
	expect(response.headers.get('content-type')).toMatch(/^application\/json/)
	const parsed = JSON.parse(text) as Record<string, unknown>
	if (response.status >= 400) {
		if (!allowServerError) expect(response.status).toBeLessThan(500)
		expect(typeof parsed.error).toBe('string')
		if (response.status < 500) expect(CODES.has(String(parsed.code))).toBe(true)
	}
	expect(text).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/)
	for (const secret of secrets) expect(text).not.toContain(secret)
}

const routes = [
	{ method: 'POST', path: '/api/contact', signedIn: false },
	{ method: 'POST', path: '/api/billing/checkout', signedIn: true },
	{ method: 'POST', path: '/api/billing/portal', signedIn: true },
	{ method: 'POST', path: '/api/account/delete-request', signedIn: true },
	{ method: 'POST', path: '/api/billing/webhook', signedIn: false },
	{ method: 'GET', path: '/api/billing/status', signedIn: true },
	{ method: 'PUT', path: '/api/health', signedIn: false },
	{ method: 'POST', path: '/api/no/such/route', signedIn: false },
]

describe.each(routes)('$method $path', ({ method, path, signedIn }) => {
	test('answers every generated body with safe JSON', async () => {
		// Every body comes with a made-up signature: the webhook notes signed deliveries it refuses.
		if (path === '/api/billing/webhook')
			expectServerLog(/^billing: \d+ signed webhook deliver(y|ies) refused since the last note \(400 bad-signature\)/)
		let sent = 0
		let limited = 0
		await fc.assert(
			fc.asyncProperty(body, fc.ipV4(), async ({ text, type }, ip) => {
				sent++
				const response = await fetch(`${app.url}${path}`, {
					method,
					headers: {
						'Content-Type': type,
						'X-Forwarded-For': ip,
						...(signedIn ? sessionHeaders(standIns.clerk, freshUser()) : {}),
						'Stripe-Signature': 't=1,v1=00',
					},
					body: method === 'GET' ? undefined : text,
				})
				if (response.status === 429) limited++
				// Contact: a valid body may legitimately be sent; the sink is up, so 500 is a failure too.
				await expectSafeJson(response)
			}),
			{ numRuns: 250 },
		)
		expect(sent).toBe(250)
		// The bodies reached the route's own rules, not a limit (each has its own user and address).
		expect(limited).toBeLessThan(25)
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
	})
})

describe('page forms', () => {
	const form = fc.dictionary(
		fc.constantFrom('name', 'email', 'subject', 'message', 'website', 'intent', 'plan', 'interval', 'confirmEmail', 'reason', 'requestId'),
		edgeStrings,
		{ maxKeys: 8 },
	)

	test.each(['/contact', '/pricing', '/account', '/admin/deletion-requests'])(
		'%s answers generated forms without a server error',
		async (path) => {
			await fc.assert(
				fc.asyncProperty(form, fc.ipV4(), async (fields, ip) => {
					const response = await fetch(`${app.url}${path}`, {
						method: 'POST',
						redirect: 'manual',
						headers: {
							'Content-Type': 'application/x-www-form-urlencoded',
							Origin: app.url,
							'X-Forwarded-For': ip,
							...sessionHeaders(standIns.clerk, userId),
						},
						body: new URLSearchParams(fields).toString(),
					})
					const text = await response.text()
					expect(response.status).toBeLessThan(500)
					expect(text).not.toMatch(/\n\s+at |node_modules/)
					for (const secret of secrets) expect(text).not.toContain(secret)
				}),
				{ numRuns: 120 },
			)
			expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
		},
	)
})

describe('POST /api/billing/webhook, correctly signed', () => {
	// The cases above never sign, so every body stops at the signature check. These are signed with the
	// webhook secret, so they reach the event parser, the processor reads and the store: JSON the
	// processor would never send. Contract §2: 200 for handled, duplicate and ignored kinds, 400 bad-body
	// for a signed body that is not an event, 500 server-error only when storing failed (nothing fails
	// here: the processor and the database are up), never bad-signature, never an HTML page or a stack.
	const HANDLED = [
		'checkout.session.completed',
		'customer.subscription.created',
		'customer.subscription.updated',
		'customer.subscription.deleted',
		'invoice.paid',
		'invoice.payment_failed',
	]
	const UNKNOWN_KINDS = [
		'customer.created',
		'invoice.upcoming',
		'checkout.session.expired',
		'customer.subscription.trial_will_end',
		'CHECKOUT.SESSION.COMPLETED',
		' invoice.paid',
		'invoice.paid\u0000',
		'__proto__',
		'constructor',
		'toString',
		'𝓤𝓷𝓲𝓬𝓸𝓭𝓮.event',
		'x'.repeat(5_000),
	]
	// Logged as they are (event id, type, subscription id): no line breaks, or one warning becomes two lines.
	const oneLine = (text: string) => text.replace(/\n/g, ' ')
	const numbers = fc.oneof(
		fc.integer(),
		fc.double(),
		fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -1, 0, -62_135_596_800, 253_402_300_800_000, 1.5),
	)
	const numberLike = fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e999', '0x10', ' 42 ', '-1', '1700000000')
	/** JSON nested `depth` levels deep, alternating arrays and objects. */
	const nested = fc.integer({ min: 20, max: 1_000 }).map((depth) => {
		let value: unknown = 'bottom'
		for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value }
		return value
	})
	// Its strings may end up in a warning (as an event id or a subscription id): no line breaks there.
	const lineStrings = edgeStrings.map(oneLine)
	const hostile = fc.oneof(
		lineStrings,
		fc.array(lineStrings, { maxLength: 3 }),
		fc.dictionary(edgeStrings, lineStrings, { maxKeys: 3 }),
		fc.boolean(),
		numbers,
		numberLike,
		nested,
		fc.constantFrom(null, true, [], {}, [[[]]], { id: null }),
	)
	/** A value of the right kind or any other, or the key left out (undefined is dropped by JSON.stringify). */
	const orHostile = <T>(good: fc.Arbitrary<T>) =>
		fc.oneof({ weight: 6, arbitrary: good }, { weight: 2, arbitrary: hostile }, { weight: 1, arbitrary: fc.constant(undefined) })

	test('answers every signed hostile event with 200 or 400 bad-body (a live-mode one under the test key 503), never a 500, and still stores a valid one', async () => {
		expectServerLog(
			/^billing: webhook [^\n]* is a live-mode event but STRIPE_SECRET_KEY is a test key; not recorded, the processor will retry it: set the key and the signing secret of one mode$/,
			/^billing: webhook [^\n]* names subscription [^\n]*, unknown to the processor; recorded and ignored$/,
			/^billing: webhook [^\n]* names no known user; recorded and ignored$/,
		)
		const stripe = standIns.stripe
		const headers = (clerkUserId: string) => sessionHeaders(standIns.clerk, clerkUserId)
		/** Opens a checkout for a new user and pays it at the processor, with no event sent yet. */
		const paidCheckout = async (plan: string, interval = 'month') => {
			const clerkUserId = newClerkUserId()
			const opened = await postJson(`${app.url}/api/billing/checkout`, { plan, interval }, headers(clerkUserId))
			expect(opened.status).toBe(200)
			const sessionId = String((await opened.json()).url)
				.split('/')
				.pop()!
			const uuid = String(stripe.checkoutParams(sessionId)!.client_reference_id)
			return { clerkUserId, uuid, ...stripe.store.completeCheckout(sessionId) }
		}
		// Real at the processor: a user's paid checkout whose events never came, a subscription of a
		// customer nobody holds, one on a price of no plan of ours naming a user nobody is.
		const victim = await paidCheckout('team')
		const nobody = crypto.randomUUID()
		const orphan = stripe.createSubscription({ customer: String(stripe.createCustomer().id), plan: 'solo', status: 'active' })
		const legacy = stripe.createSubscription({ customer: String(stripe.createCustomer().id), plan: 'legacy', userId: nobody })
		const knownSubscriptions = [String(victim.subscription.id), String(orphan.id), String(legacy.id)]

		const weirdIds = fc.constantFrom(
			'',
			' ',
			'.',
			'..',
			'%',
			'%2e%2e',
			'../customers/' + String(victim.session.customer),
			'sub_?expand[]=customer',
			'\u0000',
			'\ud800',
			'𝓤𝓷𝓲𝓬𝓸𝓭𝓮',
			'<script>alert(1)</script>',
			'x'.repeat(20_000),
			String(victim.session.customer), // a customer's id where a subscription's belongs
			String(stripe.priceFor('team', 'month').id),
		)
		const subscriptionId = fc.oneof(
			{ weight: 6, arbitrary: fc.constantFrom(...knownSubscriptions) },
			{ weight: 2, arbitrary: fc.constantFrom('sub_not_in_this_account', 'sub_' + 'A'.repeat(200)) },
			{ weight: 3, arbitrary: weirdIds },
			{ weight: 1, arbitrary: lineStrings },
		)
		const subscriptionRef = fc.oneof(
			{ weight: 4, arbitrary: subscriptionId },
			{ weight: 2, arbitrary: subscriptionId.map((id) => ({ id, object: 'subscription' })) },
			{ weight: 1, arbitrary: hostile.map((id) => ({ id })) },
			{ weight: 1, arbitrary: subscriptionId.map((id) => [id]) },
			{ weight: 2, arbitrary: hostile },
		)
		const userRef = fc.oneof(
			fc.constantFrom(
				victim.uuid,
				nobody,
				victim.uuid.toUpperCase(),
				`${victim.uuid} `,
				'-'.repeat(36),
				'f'.repeat(36),
				'00000000-0000-0000-0000-000000000000',
				'not-a-uuid',
				victim.clerkUserId,
				"' OR 1=1 --",
			),
			hostile,
		)
		const customerRef = fc.oneof(
			fc.constantFrom(String(victim.session.customer), 'cus_nobody', String(orphan.customer)),
			edgeStrings,
			hostile,
		)
		const priceRef = fc.oneof(fc.constantFrom(String(stripe.priceFor('team', 'month').id), 'price_unknown', 'team_month'), hostile)
		const metadata = fc.oneof({ weight: 3, arbitrary: fc.record({ userId: orHostile(userRef) }) }, { weight: 1, arbitrary: hostile })
		const extras = fc.dictionary(fc.oneof(contractKeys, edgeStrings), fc.oneof(anyValue, hostile), { maxKeys: 3 })

		const checkoutSession = fc.record({
			id: orHostile(fc.constant('cs_test_fuzz')),
			object: orHostile(fc.constant('checkout.session')),
			mode: orHostile(fc.constantFrom('subscription', 'payment')),
			subscription: orHostile(subscriptionRef),
			client_reference_id: orHostile(userRef),
			customer: orHostile(customerRef),
			metadata: orHostile(metadata),
		})
		const subscription = fc.record({
			id: orHostile(subscriptionId),
			object: orHostile(fc.constant('subscription')),
			customer: orHostile(customerRef),
			status: orHostile(fc.constantFrom('active', 'trialing', 'past_due', 'canceled', 'incomplete', 'bogus')),
			created: orHostile(numbers),
			cancel_at_period_end: orHostile(fc.boolean()),
			metadata: orHostile(metadata),
			items: orHostile(
				fc.record({
					data: orHostile(
						fc.array(
							fc.record({
								price: orHostile(
									fc.record({ id: orHostile(priceRef), lookup_key: orHostile(fc.constantFrom('team_month', 'gold_forever')) }),
								),
								current_period_end: orHostile(numbers),
							}),
							{ maxLength: 3 },
						),
					),
				}),
			),
		})
		const invoice = fc.record({
			id: orHostile(fc.constant('in_fuzz')),
			object: orHostile(fc.constant('invoice')),
			customer: orHostile(customerRef),
			subscription: orHostile(subscriptionRef), // where older API versions had it
			parent: orHostile(
				fc.record({
					type: orHostile(fc.constant('subscription_details')),
					subscription_details: orHostile(fc.record({ subscription: orHostile(subscriptionRef), metadata: orHostile(metadata) })),
				}),
			),
		})
		const withExtras = (shape: fc.Arbitrary<Record<string, unknown>>) => fc.tuple(shape, extras).map(([o, more]) => ({ ...more, ...o }))
		const shapeOf = (type: string) =>
			type.startsWith('checkout.') ? checkoutSession : type.startsWith('invoice.') ? invoice : subscription
		const eventId = fc.oneof(
			{ weight: 10, arbitrary: fc.nat().map((n) => `evt_fuzz_${n}`) },
			// Repeated ids: the second and later take no effect.
			{ weight: 2, arbitrary: fc.constantFrom('evt_fuzz_dup_1', 'evt_fuzz_dup_2', 'evt_fuzz_dup_3') },
			{ weight: 2, arbitrary: fc.constantFrom('', ' ', '\u0000', 'evt_\u0000nul', '\ud800', '𝓤𝓷𝓲𝓬𝓸𝓭𝓮', '__proto__', 'x'.repeat(20_000)) },
			{ weight: 1, arbitrary: lineStrings },
			{ weight: 1, arbitrary: hostile },
		)
		/** A kind and its object: mostly the object the kind carries, else any object of the three, or none. */
		const kindAndObject = fc.oneof(
			{
				weight: 6,
				arbitrary: fc.constantFrom(...HANDLED).chain((type) => fc.tuple(fc.constant<unknown>(type), withExtras(shapeOf(type)))),
			},
			{
				weight: 3,
				arbitrary: fc.tuple(
					fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...HANDLED, ...UNKNOWN_KINDS) }, { weight: 1, arbitrary: hostile }),
					fc.oneof(withExtras(checkoutSession), withExtras(subscription), withExtras(invoice), hostile),
				),
			},
		)
		const event = fc
			.record({
				id: eventId,
				object: orHostile(fc.constant('event')),
				api_version: orHostile(fc.constant('2026-10-28.endive')),
				created: orHostile(numbers),
				kind: kindAndObject,
				data: fc.oneof({ weight: 12, arbitrary: fc.record({ previous_attributes: orHostile(extras) }) }, { weight: 1, arbitrary: hostile }),
				livemode: orHostile(fc.boolean()),
			})
			.map(({ kind: [type, object], data, ...rest }) => ({
				...rest,
				type,
				data:
					typeof data === 'object' && data !== null && !Array.isArray(data) && 'previous_attributes' in data ? { object, ...data } : data,
			}))
			.chain((e) =>
				// Now and then a key the parser needs goes missing.
				fc
					.oneof({ weight: 8, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.subarray(['id', 'type', 'data']) })
					.map((dropped) => Object.fromEntries(Object.entries(e).filter(([key]) => !dropped.includes(key)))),
			)
		/** Whether the parser must take it as an event of a kind we ignore (answered 200). */
		const ignoredKind = (e: Record<string, unknown>) =>
			// Ids in the processor's alphabet (printable ASCII; kinds in lower case, digits, `_` and `.`).
			typeof e.id === 'string' &&
			/^[\x21-\x7e]{1,255}$/.test(e.id) &&
			typeof e.type === 'string' &&
			/^[a-z0-9_.]{1,100}$/.test(e.type) &&
			!HANDLED.includes(e.type) &&
			typeof e.data === 'object' &&
			e.data !== null &&
			!Array.isArray(e.data) &&
			typeof (e.data as { object?: unknown }).object === 'object' &&
			(e.data as { object?: unknown }).object !== null &&
			!Array.isArray((e.data as { object?: unknown }).object)
		/** The signed text, and the answer the contract fixes for it where it fixes one. */
		const payload = fc.oneof(
			{
				weight: 8,
				arbitrary: fc.tuple(event, fc.boolean()).map(([e, pretty]) => {
					// Pretty-printed as the processor sends it, unless deep nesting indents it past the size cap.
					const indented = pretty ? JSON.stringify(e, null, 2) : ''
					const text = pretty && indented.length < 48 * 1024 ? indented : JSON.stringify(e)
					return { text, must: ignoredKind(e) ? 200 : undefined }
				}),
			},
			{
				// Valid JSON that is not an object at all.
				weight: 2,
				arbitrary: fc
					.oneof(
						fc.constantFrom('[]', '[{}]', '"evt_1"', '42', '-1e308', 'null', 'true', '""', '[[[[[]]]]]'),
						fc.array(anyValue, { maxLength: 3 }).map((a) => JSON.stringify(a)),
						event.map((e) => JSON.stringify([e])),
						edgeStrings.map((t) => JSON.stringify(t)),
						numbers.map((n) => JSON.stringify(n)),
					)
					.map((text) => ({ text, must: 400 as number | undefined })),
			},
		)

		const saysLiveMode = (text: string) => {
			try {
				return (JSON.parse(text) as { livemode?: unknown } | null)?.livemode === true
			} catch {
				return false
			}
		}
		const deliver = (text: string) => {
			const { header } = stripe.signEvent(text)
			return fetch(`${app.url}/api/billing/webhook`, {
				method: 'POST',
				headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': header },
				body: text,
			})
		}
		// Answers the contract allows but not for this body (an ignored kind refused, a non-object taken)
		// are collected, so that the checks after the run still run; they fail the test at the end.
		const wrongAnswers: string[] = []
		/** The answers the contract allows a correctly signed body. */
		const expectAllowedAnswer = async (response: Response, text: string, must: number | undefined) => {
			const answer = await response.clone().text()
			const what = `${response.status} ${answer.slice(0, 200)} for ${text.slice(0, 300)}`
			await expectSafeJson(response, { allowServerError: true })
			const body = JSON.parse(answer) as { code?: string }
			const fits = Buffer.byteLength(text) <= 64 * 1024
			if (response.status === 200) expect(body, what).toEqual({ received: true })
			else if (response.status === 400) expect(body.code, what).toBe('bad-body')
			else if (response.status === 413) expect(fits, what).toBe(false)
			else if (response.status === 503) {
				// The app runs on a test key (sk_test_…): a live-mode event is the other mode's, retried until
				// the keys match. Never for a body that does not say livemode: true.
				expect([body.code, saysLiveMode(text)], what).toEqual(['processor_not_configured', true])
			} else {
				expect([response.status, body.code], what).toEqual([500, 'server-error'])
				// With the database and the processor up, a 500 invites a retry that fails the same way for
				// days: any body the processor's retries cannot fix must be answered 200 or 400.
				wrongAnswers.push(`a 500 while nothing is down: ${what}`)
			}
			if (must !== undefined && fits && response.status !== must) wrongAnswers.push(`expected ${must}: ${what}`)
		}

		let sent = 0
		await fc.assert(
			fc.asyncProperty(payload, fc.boolean(), async ({ text, must }, twice) => {
				sent++
				const first = await deliver(text)
				await expectAllowedAnswer(first, text, must)
				if (twice) {
					// The same event again (a processor retry, or a duplicate): answered as the first time.
					const again = await deliver(text)
					await expectAllowedAnswer(again, text, must)
					if (first.status === 200 || first.status === 400) expect(again.status).toBe(first.status)
				}
			}),
			{ numRuns: 250, seed: 20_260_101 },
		)
		expect(sent).toBe(250)
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)

		// A normal event still takes effect: a new user's paid checkout shows in their status.
		const after = await paidCheckout('studio', 'year')
		const delivered = await deliver(JSON.stringify(stripe.makeEvent('checkout.session.completed', after.session), null, 2))
		expect(delivered.status).toBe(200)
		const state = await (await fetch(`${app.url}/api/billing/status`, { headers: headers(after.clerkUserId) })).json()
		expect(state).toMatchObject({
			plan: 'studio',
			status: 'trialing',
			has_subscription: true,
			processor_customer_id: after.session.customer,
		})

		// Nothing stored came from the garbage: every subscription row is one the processor holds, for a
		// user it may belong to (its own metadata, or the checkout that named that user).
		const stored = await readStored(app, appEnv, (prisma) =>
			prisma.subscription.findMany({ select: { stripeSubscriptionId: true, userId: true } }),
		)
		app = stored.app
		for (const row of stored.value) {
			expect([...knownSubscriptions, String(after.subscription.id)]).toContain(row.stripeSubscriptionId)
			expect([victim.uuid, after.uuid]).toContain(row.userId)
		}
		expect(stored.value.find((row) => row.userId === after.uuid)?.stripeSubscriptionId).toBe(String(after.subscription.id))
		expect(wrongAnswers).toEqual([])
	}, 240_000)
})
