import { afterEach, describe, expect, test } from 'vitest'
import { withoutCallSiteTrace } from './stripe.server.ts'

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
