import { describe, expect, test } from 'vitest'
import { initEnv } from './env.server.ts'
import { healthBody } from './health.server.ts'

// healthBody keeps one payload per process: each test starts from a time after every earlier one.
let clock = Date.parse('2030-01-01T00:00:00.000Z')
const later = (ms = 3_600_000) => (clock += ms)

describe('the health payload', () => {
	test('is the same for 10 s, then built again with the new time', () => {
		initEnv({ COMMIT_SHA: 'abcdef0123456789', REGION: 'cdg' })
		const start = later()
		const first = healthBody(start)
		expect(JSON.parse(first)).toEqual({ ok: true, version: 'abcdef0', region: 'cdg', timestamp: new Date(start).toISOString() })
		expect(healthBody(start + 9_999)).toBe(first)
		const next = healthBody(start + 10_000)
		expect(JSON.parse(next).timestamp).toBe(new Date(start + 10_000).toISOString())
		expect(healthBody(start + 19_999)).toBe(next)
	})

	test.each([
		[{ REGION: 'cdg', FLY_REGION: 'ams', VERCEL_REGION: 'fra1', AWS_REGION: 'eu-west-1' }, 'cdg'],
		[{ FLY_REGION: 'ams', VERCEL_REGION: 'fra1', AWS_REGION: 'eu-west-1' }, 'ams'],
		[{ VERCEL_REGION: 'fra1', AWS_REGION: 'eu-west-1' }, 'fra1'],
		[{ AWS_REGION: 'eu-west-1' }, 'eu-west-1'],
		[{}, 'unknown'],
	])('region from %o is %s', (source, region) => {
		initEnv(source)
		expect(JSON.parse(healthBody(later()))).toMatchObject({ region })
	})

	test('without COMMIT_SHA or a commit recorded at build time, the version is "unknown"', () => {
		// Unit tests run without the build's define (vite.config.ts); the built server's case is in foundation.test.ts.
		initEnv({})
		expect(JSON.parse(healthBody(later()))).toMatchObject({ version: 'unknown' })
	})
})
