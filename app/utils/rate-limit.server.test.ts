import { afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { initEnv } from './env.server.ts'
import { createRollingLimiter } from './rate-limit.server.ts'

// Without a database or REDIS_URL the limiters count in memory; the slot logic is the same on every
// store (each store's atomic count is exercised by tests/integration/rate-limit-stores.test.ts).
beforeAll(() => {
	initEnv({ NODE_ENV: 'test', APP_URL: 'https://callsheet.example' })
})

afterEach(() => {
	vi.useRealTimers()
})
const allowedCount = (outcomes: Array<{ allowed: boolean }>) => outcomes.filter((o) => o.allowed).length

describe('rolling limit (5 in any 4 s here; the contact limit is 5 in any 60 s)', () => {
	test('a request is refused while five were accepted in the last window, and accepted once the oldest leaves it', async () => {
		// The memory store keeps time with Date and setTimeout: a clock of the test's own, so a busy
		// machine cannot move a request across a window's edge.
		vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
		const limiter = createRollingLimiter(`t_roll_${Date.now()}`, { points: 5, durationSeconds: 4 })
		expect((await limiter.consume('ip')).allowed).toBe(true) // t = 0
		await vi.advanceTimersByTimeAsync(2_000)
		const four = [await limiter.consume('ip'), await limiter.consume('ip'), await limiter.consume('ip'), await limiter.consume('ip')]
		expect(allowedCount(four)).toBe(4) // t = 2 s: five in the window
		const sixth = await limiter.consume('ip')
		// Refused until the first leaves the window at t = 4 s: at most 2 s from here.
		if (sixth.allowed) throw new Error('a sixth request inside the window must be refused')
		expect([1, 2]).toContain(sixth.retryAfterSeconds)
		await vi.advanceTimersByTimeAsync(2_300)
		// t = 4.3 s: the first has left the window, the four of t ≈ 2 s have not (until t ≈ 6 s). A fixed
		// window that started at t ≈ 0 would have restarted at 4 s and let five through here.
		const later = [await limiter.consume('ip'), await limiter.consume('ip'), await limiter.consume('ip')]
		expect(later.map((o) => o.allowed)).toEqual([true, false, false])
	})

	test('a burst of ten concurrent requests lets exactly five through', async () => {
		const limiter = createRollingLimiter(`t_burst_${Date.now()}`, { points: 5, durationSeconds: 60 })
		const outcomes = await Promise.all(Array.from({ length: 10 }, () => limiter.consume('ip')))
		expect(allowedCount(outcomes)).toBe(5)
		for (const outcome of outcomes.filter((o) => !o.allowed)) expect(outcome).toEqual({ allowed: false, retryAfterSeconds: 60 })
	})

	test('a refunded request no longer counts, and keys are counted apart', async () => {
		const limiter = createRollingLimiter(`t_refund_${Date.now()}`, { points: 5, durationSeconds: 60 })
		const first = await limiter.consume('ip')
		if (!first.allowed) throw new Error('the first request of a key must be allowed')
		await first.refund()
		const next = await Promise.all(Array.from({ length: 6 }, () => limiter.consume('ip')))
		expect(allowedCount(next)).toBe(5)
		expect((await limiter.consume('other-ip')).allowed).toBe(true)
	})
})
