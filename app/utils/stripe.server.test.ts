import { afterEach, describe, expect, test } from 'vitest'
import { initEnv } from './env.server.ts'
import { isLiveObjectAskedWithTestKey, secretKeyMode, withoutCallSiteTrace } from './stripe.server.ts'

const normalLimit = Error.stackTraceLimit

afterEach(() => {
	Error.stackTraceLimit = normalLimit
})

describe('withoutCallSiteTrace', () => {
	test('starts the call with no stack frames captured, and hands back what the call returned', () => {
		const started = withoutCallSiteTrace(() => ({ stack: new Error('inside').stack, answer: Promise.resolve(42) }))
		expect(started.stack).toBe('Error: inside')
		return expect(started.answer).resolves.toBe(42)
	})

	test('puts the limit back after the call, also when the call throws', () => {
		Error.stackTraceLimit = 7
		expect(() =>
			withoutCallSiteTrace(() => {
				throw new Error('refused')
			}),
		).toThrow('refused')
		expect(Error.stackTraceLimit).toBe(7)
		expect(new Error('after').stack?.split('\n').length).toBeGreaterThan(1)
	})
})

describe('secretKeyMode', () => {
	afterEach(() => initEnv({}))

	test('reads the mode from the key prefix, secret or restricted; says nothing for any other form', () => {
		const modeOf = (key: string | undefined) => (initEnv({ STRIPE_SECRET_KEY: key }), secretKeyMode())
		expect(modeOf('sk_live_abc')).toBe('live')
		expect(modeOf('rk_live_abc')).toBe('live')
		expect(modeOf('sk_test_abc')).toBe('test')
		expect(modeOf('rk_test_abc')).toBe('test')
		for (const key of [undefined, 'pk_live_abc', 'sk_abc', 'whsec_live_abc', 'SK_LIVE_abc'])
			expect(modeOf(key), String(key)).toBeUndefined()
	})
})

describe('isLiveObjectAskedWithTestKey', () => {
	afterEach(() => initEnv({}))

	// Stripe's words for a live object asked for with a test key (a 404, code resource_missing).
	const liveUnderTest = {
		code: 'resource_missing',
		message:
			"No such customer: 'cus_Jop8JpEFz1lsCL'; a similar object exists in live mode, but a test mode key was used to make this request.",
	}

	test("Stripe's message under a test key; not under a live key, nor for a plain 404 or another mode's object", () => {
		initEnv({ STRIPE_SECRET_KEY: 'sk_test_x' })
		expect(isLiveObjectAskedWithTestKey(liveUnderTest)).toBe(true)
		expect(isLiveObjectAskedWithTestKey({ code: 'resource_missing', message: "No such customer: 'cus_x'" })).toBe(false)
		expect(
			isLiveObjectAskedWithTestKey({
				code: 'resource_missing',
				message: "No such customer: 'cus_x'; a similar object exists in test mode, but a live mode key was used to make this request.",
			}),
		).toBe(false)
		expect(isLiveObjectAskedWithTestKey({ ...liveUnderTest, code: 'parameter_invalid' })).toBe(false)
		initEnv({ STRIPE_SECRET_KEY: 'sk_live_x' })
		expect(isLiveObjectAskedWithTestKey(liveUnderTest)).toBe(false)
	})
})
