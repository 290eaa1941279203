import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { InvalidEnvError, parseEnv, startupWarnings } from './env.server.ts'

/** The variables `.env.example` sets, read the way a dotenv loader would (comments and blanks skipped). */
function exampleEnv(): Record<string, string> {
	const text = fs.readFileSync(path.resolve(import.meta.dirname, '../../.env.example'), 'utf8')
	const entries = text
		.split('\n')
		.map((line) => line.trim())
		.filter((line) => line !== '' && !line.startsWith('#'))
		.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const)
	return Object.fromEntries(entries)
}

function problemsOf(source: Record<string, string>): string[] {
	try {
		parseEnv(source)
		return []
	} catch (error) {
		if (error instanceof InvalidEnvError) return error.problems
		throw error
	}
}

describe('configuration', () => {
	test('.env.example, copied as it is, is a valid configuration with the contract defaults', () => {
		const example = exampleEnv()
		expect(example.CONTACT_TO).toBe('support@localhost')
		const config = parseEnv(example)
		expect(config.CONTACT_TO).toBe('support@localhost')
		expect(config.MAIL_FROM).toBe('no-reply@localhost')
		expect(config.PORT).toBe(3000)
	})

	test('an unset APP_URL is http://localhost on the port served (contract: http://localhost:$PORT)', () => {
		expect(parseEnv({}).APP_URL).toBe('http://localhost:3000')
		expect(parseEnv({ PORT: '8081' }).APP_URL).toBe('http://localhost:8081')
		expect(parseEnv({ PORT: '8081', APP_URL: 'https://app.callsheet.example' }).APP_URL).toBe('https://app.callsheet.example')
	})

	test('unset mail addresses fall back to the contract defaults', () => {
		const config = parseEnv({})
		expect([config.CONTACT_TO, config.MAIL_FROM]).toEqual(['support@localhost', 'no-reply@localhost'])
	})

	test.each(['support@callsheet.app', 'ops+contact@mail.callsheet.app', 'Callsheet <no-reply@callsheet.app>', 'no-reply@localhost'])(
		'accepts the address %s',
		(address) => {
			expect(problemsOf({ CONTACT_TO: address, MAIL_FROM: address })).toEqual([])
			expect(parseEnv({ MAIL_FROM: address }).MAIL_FROM).toBe(address)
		},
	)

	test.each(['support', 'support@', '@callsheet.app', 'a b@callsheet.app', 'support@-bad-.app', 'one@a.app, two@b.app'])(
		'refuses the address %s with one line naming the variable',
		(address) => {
			expect(problemsOf({ CONTACT_TO: address })).toEqual([
				'CONTACT_TO: must be an email address (e.g. support@example.com or Callsheet <support@example.com>)',
			])
		},
	)

	test('SMTP_URL names a mail server: a URL without a host (every message went to 127.0.0.1:587) or with a port that is not a number is one line naming it', () => {
		expect(problemsOf({ SMTP_URL: 'smtp://user:pass@mail.example.com:587' })).toEqual([])
		for (const value of ['smtp://', 'smtps://', 'smtp://u:p@mail.example.com:xx', 'http://mail.example.com']) {
			expect(problemsOf({ SMTP_URL: value }), value).toEqual([
				'SMTP_URL: must be a URL starting with smtp:// or smtps://, with a host and a numeric port if any (e.g. smtp://user:pass@mail.example.com:587)',
			])
		}
	})

	test('an SMTP_URL password with a % that is no percent-encoding (50%off) is one line saying how to write it; encoded ones are read', () => {
		for (const value of ['smtp://mailer:50%off@mail.example.com:587', 'smtps://50%@mail.example.com']) {
			expect(problemsOf({ SMTP_URL: value }), value).toEqual([
				'SMTP_URL: has a user or password that is not valid percent-encoding: write % as %25 (and @ : / as %40 %3A %2F)',
			])
		}
		expect(problemsOf({ SMTP_URL: 'smtp://mailer:50%25off%40x@mail.example.com:587' })).toEqual([])
	})

	test('APP_URL is the site’s address alone: a path, query, fragment or user is one line; trailing slashes are dropped', () => {
		for (const value of [
			'https://callsheet.example.com/app',
			'https://callsheet.example.com/app/',
			'https://callsheet.example.com/?ref=1',
			'https://callsheet.example.com?',
			'https://callsheet.example.com/#top',
			'https://ops:secret@callsheet.example.com',
		]) {
			expect(problemsOf({ APP_URL: value }), value).toEqual([
				'APP_URL: must be the site’s address alone: scheme, host and port (e.g. https://app.example.com), with no path, query, fragment or user',
			])
		}
		expect(parseEnv({ APP_URL: 'https://callsheet.example.com:8443//' }).APP_URL).toBe('https://callsheet.example.com:8443')
	})

	test('REDIS_URL names a server: redis:// alone is one line', () => {
		expect(problemsOf({ REDIS_URL: 'redis://' })).toEqual([
			'REDIS_URL: must be a URL starting with redis:// or rediss://, with a host and a numeric port if any (e.g. redis://127.0.0.1:6379)',
		])
		expect(problemsOf({ REDIS_URL: 'redis://:secret@cache.internal:6379/0' })).toEqual([])
	})

	test('SMTP_MAX_CONNECTIONS: 10 when unset, a number from 1 to 100 when set, else one line naming it', () => {
		expect(parseEnv({}).SMTP_MAX_CONNECTIONS).toBe(10)
		expect(parseEnv({ SMTP_MAX_CONNECTIONS: '3' }).SMTP_MAX_CONNECTIONS).toBe(3)
		expect(parseEnv({ SMTP_MAX_CONNECTIONS: '100' }).SMTP_MAX_CONNECTIONS).toBe(100)
		for (const value of ['0', '101', '2.5', 'ten', '-1']) {
			expect(problemsOf({ SMTP_MAX_CONNECTIONS: value })).toEqual([
				'SMTP_MAX_CONNECTIONS: must be a number of connections from 1 to 100 (e.g. 10)',
			])
		}
	})

	test('a key that does not look like its kind (pasted into the wrong variable) is warned about, not refused', () => {
		const config = parseEnv({
			NODE_ENV: 'production',
			CLERK_PUBLISHABLE_KEY: 'pk_live_Y2xlcmsuZXhhbXBsZS50ZXN0JA==',
			CLERK_SECRET_KEY: 'whsec_swapped',
			STRIPE_SECRET_KEY: 'rk_live_restricted',
			STRIPE_WEBHOOK_SECRET: 'sk_live_swapped',
		})
		const warnings = startupWarnings(config).filter((line) => line.includes('does not look like'))
		expect(warnings).toEqual([expect.stringMatching(/^CLERK_SECRET_KEY /), expect.stringMatching(/^STRIPE_WEBHOOK_SECRET /)])
		expect(warnings.join('\n')).not.toContain('swapped') // a warning never prints the key
	})
	test("a publishable key Clerk's own parser cannot read stops start-up", () => {
		for (const key of ['pk_test_abc', 'pk_live_', 'pk_test_' + Buffer.from('no-dot$').toString('base64')]) {
			expect(problemsOf({ CLERK_PUBLISHABLE_KEY: key }), key).toEqual([
				expect.stringMatching(/^CLERK_PUBLISHABLE_KEY: is not a Clerk publishable key/),
			])
		}
		expect(problemsOf({ CLERK_PUBLISHABLE_KEY: 'pk_live_' + Buffer.from('clerk.callsheet.app$').toString('base64') })).toEqual([])
	})

	test('the embedded database is said to be for development: it does not flush writes to disk', () => {
		const DURABILITY =
			'The embedded database is for development and trials only: it does not flush writes to disk, so a power loss or system crash can lose or corrupt it. Set DATABASE_URL=postgres://… for real data.'
		const databaseWarnings = (source: Record<string, string>) =>
			startupWarnings(parseEnv(source)).filter((line) => line.includes('embedded database'))
		for (const source of [{}, { DATABASE_URL: 'file:./data/other' }, { DATABASE_URL: 'FILE:./data/other' }] as Array<
			Record<string, string>
		>) {
			expect(databaseWarnings(source), JSON.stringify(source)).toEqual([DURABILITY])
		}
		for (const url of ['postgres://app:s3cret@db/callsheet', 'POSTGRESQL://db/callsheet']) {
			expect(databaseWarnings({ DATABASE_URL: url }), url).toEqual([])
		}
	})

	test('a DATABASE_URL naming another kind of database is warned about in the same line (the embedded database serves), without the URL', () => {
		const warningsFor = (url: string) =>
			startupWarnings(parseEnv({ DATABASE_URL: url })).filter((line) => line.includes('embedded database'))
		expect(warningsFor('postgress://app:s3cret@db.internal/callsheet')).toEqual([
			'DATABASE_URL is not a postgres:// URL (it starts postgress:): the embedded database serves instead. The embedded database is for development and trials only: it does not flush writes to disk, so a power loss or system crash can lose or corrupt it. Set DATABASE_URL=postgres://… for real data.',
		])
		expect(warningsFor('mysql://app:s3cret@db.internal/callsheet')).toEqual([
			expect.stringMatching(/^DATABASE_URL is not a postgres:\/\/ URL \(it starts mysql:\)/),
		])
		expect(warningsFor('mysql://app:s3cret@db.internal/callsheet')[0]).not.toContain('s3cret')
	})

	test('start-up warnings name the Clerk key that is missing, and a loopback APP_URL once real keys are set', () => {
		const clerkLines = (source: Record<string, string>) =>
			startupWarnings(parseEnv(source)).filter((line) => line.includes('sign-in is off'))
		expect(clerkLines({})).toEqual(['CLERK_PUBLISHABLE_KEY and CLERK_SECRET_KEY not set: sign-in is off; signed-in endpoints answer 401.'])
		expect(clerkLines({ CLERK_PUBLISHABLE_KEY: 'pk_live_Y2xlcmsuZXhhbXBsZS50ZXN0JA==' })).toEqual([
			'CLERK_SECRET_KEY not set: sign-in is off; signed-in endpoints answer 401.',
		])
		const appUrlLines = (source: Record<string, string>) => startupWarnings(parseEnv(source)).filter((line) => line.startsWith('APP_URL'))
		const keys = { CLERK_PUBLISHABLE_KEY: 'pk_live_Y2xlcmsuZXhhbXBsZS50ZXN0JA==', CLERK_SECRET_KEY: 'sk_live_x' }
		expect(appUrlLines(keys)).toEqual([
			'APP_URL is http://localhost:3000: sign-in accepts sessions only from pages served there, and checkout and the customer portal return there. Set APP_URL to the public address before serving anyone else.',
		])
		expect(appUrlLines({ STRIPE_SECRET_KEY: 'sk_test_x', APP_URL: 'http://127.0.0.1:8080' })).toHaveLength(1)
		// No keys (the quick start), or a public address: nothing to say.
		expect(appUrlLines({})).toEqual([])
		expect(appUrlLines({ ...keys, APP_URL: 'https://app.callsheet.example' })).toEqual([])
	})

	test('a public APP_URL with test keys, keys of two modes, or http:// under sign-in: start-up says so, naming no key', () => {
		const said = (source: Record<string, string>) =>
			startupWarnings(parseEnv(source)).filter((line) => /test-mode|development instance|keys are|\(http:\/\/\)/.test(line))
		const clerkTest = { CLERK_PUBLISHABLE_KEY: 'pk_test_Y2xlcmsuZXhhbXBsZS50ZXN0JA==', CLERK_SECRET_KEY: 'sk_test_secretvalue' }
		const clerkLive = { CLERK_PUBLISHABLE_KEY: 'pk_live_Y2xlcmsuZXhhbXBsZS50ZXN0JA==', CLERK_SECRET_KEY: 'sk_live_secretvalue' }
		const https = { APP_URL: 'https://app.callsheet.example' }
		expect(said({ ...https, ...clerkLive, STRIPE_SECRET_KEY: 'sk_live_secretvalue' })).toEqual([])
		expect(said({ ...https, ...clerkLive, STRIPE_SECRET_KEY: 'sk_test_secretvalue' })).toEqual([
			'STRIPE_SECRET_KEY is a test-mode key on https://app.callsheet.example: checkout takes no real payments (fine for staging, not for customers).',
			'The Clerk keys are live keys and STRIPE_SECRET_KEY is a test-mode key: check that one of them is not left over from another deployment.',
		])
		expect(said({ ...https, ...clerkTest, STRIPE_SECRET_KEY: 'rk_test_secretvalue' })).toEqual([
			'STRIPE_SECRET_KEY is a test-mode key on https://app.callsheet.example: checkout takes no real payments (fine for staging, not for customers).',
			"The Clerk keys are a development instance's on https://app.callsheet.example: fine for staging; customers sign in to a production instance.",
		])
		expect(said({ ...https, ...clerkTest, STRIPE_SECRET_KEY: 'sk_live_secretvalue' })).toContain(
			'The Clerk keys are development keys and STRIPE_SECRET_KEY is a live-mode key: check that one of them is not left over from another deployment.',
		)
		expect(said({ ...clerkLive, APP_URL: 'http://callsheet.example' })).toEqual([
			'APP_URL is http://callsheet.example (http://): sign-in accepts sessions only from pages served at that exact origin. If users reach the site over https://, set APP_URL to the https:// address or every signed-in request answers 401.',
		])
		// On this machine (development, the quick start, the tests) none of it is news.
		expect(said({ ...clerkTest, STRIPE_SECRET_KEY: 'sk_test_secretvalue' })).toEqual([])
		expect(said({ ...clerkLive, STRIPE_SECRET_KEY: 'sk_test_secretvalue', APP_URL: 'http://127.0.0.1:3000' })).toEqual([])
		const all = startupWarnings(parseEnv({ ...https, ...clerkTest, STRIPE_SECRET_KEY: 'sk_live_secretvalue' })).join('\n')
		expect(all).not.toContain('secretvalue')
	})

	test('ADMIN_USER_IDS written with spaces, semicolons or quotes inside an id stops start-up; commas with spaces around them are read', () => {
		expect(problemsOf({ ADMIN_USER_IDS: 'user_1; user_2' })).toEqual([
			'ADMIN_USER_IDS: must be Clerk user ids separated by commas (e.g. user_2abc,user_2def), with no spaces, semicolons or quotes inside an id',
		])
		expect(problemsOf({ ADMIN_USER_IDS: 'user_1 user_2' })).toHaveLength(1)
		// Quoted for a shell and passed on with the quotes (docker --env-file): an id that matches nobody.
		for (const quoted of ['"user_1"', "'user_1','user_2'"]) expect(problemsOf({ ADMIN_USER_IDS: quoted }), quoted).toHaveLength(1)
		expect([...parseEnv({ ADMIN_USER_IDS: ' user_1 , user_2,' }).ADMIN_USER_IDS]).toEqual(['user_1', 'user_2'])
	})

	test('a NODE_ENV other than production, development or test is served as production, and start-up says what it costs', () => {
		const said = (source: Record<string, string>) => startupWarnings(parseEnv(source)).filter((line) => line.startsWith('NODE_ENV'))
		const staging = parseEnv({ NODE_ENV: 'staging' })
		expect(staging.NODE_ENV).toBe('production')
		expect(said({ NODE_ENV: 'staging' })).toEqual([
			'NODE_ENV=staging is not production, development or test: the server runs as in production, but libraries that read NODE_ENV themselves (React) take their slower development builds. Set NODE_ENV=production for every deployment, staging included.',
		])
		for (const value of ['production', 'development', 'test']) expect(said({ NODE_ENV: value }), value).toEqual([])
		expect(said({})).toEqual([])
		// Shown printable and short, whatever it holds.
		expect(said({ NODE_ENV: `prod\nuction${'x'.repeat(100)}` })[0]).toMatch(/^NODE_ENV=prod\?uctionx{29} is not/)
	})

	test('BENCH_RAISE_LIMITS=1 raises the limits only on a loopback APP_URL, and start-up says which', () => {
		const read = (source: Record<string, string>) => {
			const config = parseEnv(source)
			return { raised: config.limitsRaisedForBench, said: startupWarnings(config).filter((line) => line.startsWith('BENCH_RAISE_LIMITS')) }
		}
		expect(read({ BENCH_RAISE_LIMITS: '1' })).toEqual({
			raised: true,
			said: ['BENCH_RAISE_LIMITS=1: every rate limit is raised to 1,000,000 a window, for benchmarks. Unset it before serving anyone.'],
		})
		expect(read({ BENCH_RAISE_LIMITS: '1', APP_URL: 'http://[::1]:8080' }).raised).toBe(true)
		const ignored = ['BENCH_RAISE_LIMITS is ignored: it is honoured only when APP_URL is this machine; the rate limits apply as usual.']
		expect(read({ BENCH_RAISE_LIMITS: '1', APP_URL: 'https://app.callsheet.example' })).toEqual({ raised: false, said: ignored })
		expect(read({ BENCH_RAISE_LIMITS: 'yes' })).toEqual({
			raised: false,
			said: ['BENCH_RAISE_LIMITS is ignored: only 1 turns it on; the rate limits apply as usual.'],
		})
		expect(read({})).toEqual({ raised: false, said: [] })
		expect(read({ BENCH_RAISE_LIMITS: ' ' })).toEqual({ raised: false, said: [] })
	})
})
