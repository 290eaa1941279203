import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

// Thousands of generated bodies against every /api/* route and every page form: the answer is always
// JSON (API) with a contract code, never a 500 for bad input, never a stack trace or a secret, and the
// server stays up.
let standIns: StandIns
let app: RunningApp
let secrets: string[]
const userId = newClerkUserId()

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
	app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), TRUST_PROXY: '1', ...standIns.env })
	standIns.clerkApi.setUser({ id: userId, email: 'fuzz@example.com' })
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
		let sent = 0
		await fc.assert(
			fc.asyncProperty(body, fc.ipV4(), async ({ text, type }, ip) => {
				sent++
				const response = await fetch(`${app.url}${path}`, {
					method,
					headers: {
						'Content-Type': type,
						'X-Forwarded-For': ip,
						...(signedIn ? sessionHeaders(standIns.clerk, userId) : {}),
						'Stripe-Signature': 't=1,v1=00',
					},
					body: method === 'GET' ? undefined : text,
				})
				// Contact: a valid body may legitimately be sent; the sink is up, so 500 is a failure too.
				await expectSafeJson(response)
			}),
			{ numRuns: 250 },
		)
		expect(sent).toBe(250)
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
