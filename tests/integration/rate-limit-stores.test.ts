import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl, withDatabase } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { postJson, uniqueIp } from '../support/http.ts'
import { startSmtpSink, type SmtpSink } from '../mocks/smtp.ts'
import { freePort } from '../support/postgres.ts'
import { hasRedis, startTestRedis } from '../support/redis.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'

// The contact limit must hold on every store: memory (embedded database), the PostgreSQL database
// itself (shared by instances), and Redis (REDIS_URL). Redis is mandatory under CI=true.
const valid = { name: 'Ada', email: 'ada@example.com', subject: 'Hi', message: 'Hello' }
let sink: SmtpSink

beforeAll(async () => {
	sink = await startSmtpSink()
})
afterAll(async () => {
	await sink?.close()
})

async function burst(app: RunningApp, ip: string) {
	const responses = await Promise.all(
		Array.from({ length: 10 }, () => postJson(`${app.url}/api/contact`, valid, { 'X-Forwarded-For': ip })),
	)
	return responses.map((r) => r.status).sort()
}

const FIVE_AND_FIVE = [200, 200, 200, 200, 200, 429, 429, 429, 429, 429]

describe('Redis store (REDIS_URL)', () => {
	const redisAvailable = hasRedis()
	if (!redisAvailable && process.env.CI === 'true')
		throw new Error('redis-server is required under CI=true (apt-get install -y redis-server)')

	test.runIf(redisAvailable)('a concurrent burst of 10 gives exactly 5 × 200 and 5 × 429, counted in Redis', async () => {
		const redis = await startTestRedis()
		const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: sink.url, TRUST_PROXY: '1', REDIS_URL: redis.url })
		try {
			expect(app.output()).toMatch(/^rate limits: counted in Redis \(REDIS_URL\), shared by every instance that uses it$/m)
			expect(app.output()).not.toContain(redis.url)
			const ip = uniqueIp()
			expect(await burst(app, ip)).toEqual(FIVE_AND_FIVE)
			// Each accepted submission holds one of five slots in Redis for the rolling minute.
			const client = new Redis(redis.url)
			const slotTtls = await Promise.all([0, 1, 2, 3, 4, 5].map((slot) => client.pttl(`rl_contact:${ip}#${slot}`)))
			client.disconnect()
			for (const ttl of slotTtls.slice(0, 5)) expect(ttl).toBeGreaterThan(50_000)
			for (const ttl of slotTtls.slice(0, 5)) expect(ttl).toBeLessThanOrEqual(60_000)
			expect(slotTtls[5]).toBe(-2) // no sixth slot: the limit is five
		} finally {
			await app.stop()
			await redis.stop()
		}
	})

	test.runIf(redisAvailable)('Redis going away and coming back: the contact form keeps working, and the log says both, once', async () => {
		expectServerLog(/^rate limits: Redis unavailable /, /^rate limits: Redis did not count \d+ request\(s\) since the last note;/)
		let redis = await startTestRedis()
		const port = Number(new URL(redis.url).port)
		const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: sink.url, TRUST_PROXY: '1', REDIS_URL: redis.url })
		try {
			expect((await postJson(`${app.url}/api/contact`, valid, { 'X-Forwarded-For': uniqueIp() })).status).toBe(200)
			await redis.stop()
			for (let i = 0; i < 3; i++) {
				expect((await postJson(`${app.url}/api/contact`, valid, { 'X-Forwarded-For': uniqueIp() })).status).toBe(200)
			}
			await until(() => app.output().includes('rate limits: Redis unavailable'), 10_000, 'the outage in the log')
			redis = await startTestRedis({ port })
			await until(() => app.output().includes('rate limits: Redis is back'), 20_000, 'the recovery in the log')
			// ioredis failed many reconnection attempts meanwhile: one line for the outage.
			expect(app.output().match(/Redis unavailable/g)).toHaveLength(1)
		} finally {
			await app.stop()
			await redis.stop()
		}
	})
})

describe('Redis down when the server starts (REDIS_URL)', () => {
	// Redis is started once the first half is checked: the whole test needs it (mandatory under CI=true, above).
	test.runIf(hasRedis())(
		'start-up does not call the limits shared; the contact form works; once Redis answers, it counts there',
		async () => {
			expectServerLog(/^rate limits: Redis unavailable /, /^rate limits: Redis did not count \d+ request\(s\) since the last note;/)
			const port = await freePort()
			const app = await startApp({
				DATABASE_URL: await freshDatabaseUrl(),
				SMTP_URL: sink.url,
				TRUST_PROXY: '1',
				REDIS_URL: `redis://127.0.0.1:${port}`,
			})
			let redis: Awaited<ReturnType<typeof startTestRedis>> | undefined
			try {
				expect(app.output()).toMatch(
					/^rate limits: to be counted in Redis \(REDIS_URL\), which has not answered yet: until it does, each instance counts in its own memory/m,
				)
				expect(app.output()).not.toMatch(/shared by every instance that uses it/)
				expect((await postJson(`${app.url}/api/contact`, valid, { 'X-Forwarded-For': uniqueIp() })).status).toBe(200)
				redis = await startTestRedis({ port })
				await until(() => app.output().includes('rate limits: Redis is back'), 20_000, 'Redis reached')
				const ip = uniqueIp()
				expect((await postJson(`${app.url}/api/contact`, valid, { 'X-Forwarded-For': ip })).status).toBe(200)
				const client = new Redis(redis.url)
				expect(await client.exists(`rl_contact:${ip}#0`)).toBe(1)
				client.disconnect()
			} finally {
				await app.stop()
				await redis?.stop()
			}
		},
		60_000,
	)
})

describe('Redis that keeps its connections but does not answer (REDIS_URL)', () => {
	test.runIf(hasRedis())(
		'limited requests still answer: each counted in memory after a second, said in the log, and Redis counts again when it answers',
		async () => {
			expectServerLog(
				/^rate limits: Redis did not count 1 request\(s\) since the last note; each instance counts in its own memory meanwhile$/,
			)
			const redis = await startTestRedis()
			const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: sink.url, TRUST_PROXY: '1', REDIS_URL: redis.url })
			try {
				expect((await postJson(`${app.url}/api/contact`, valid, { 'X-Forwarded-For': uniqueIp() })).status).toBe(200)
				redis.freeze()
				// Within the client's patience (it waited for good before), and still limited.
				const ip = uniqueIp()
				const answered = await Promise.all(
					Array.from({ length: 7 }, () =>
						fetch(`${app.url}/api/contact`, {
							method: 'POST',
							headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ip },
							body: JSON.stringify(valid),
							signal: AbortSignal.timeout(10_000),
						}),
					),
				)
				expect(answered.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429])
				await until(() => /^rate limits: Redis did not count/m.test(app.output()), 5_000, 'the note')
				redis.thaw()
				// Answering again, Redis counts: five slots of a new visitor are in it.
				const again = uniqueIp()
				for (let i = 0; i < 5; i++) expect((await postJson(`${app.url}/api/contact`, valid, { 'X-Forwarded-For': again })).status).toBe(200)
				const client = new Redis(redis.url)
				const slots = await Promise.all([0, 1, 2, 3, 4].map((slot) => client.exists(`rl_contact:${again}#${slot}`)))
				client.disconnect()
				expect(slots).toEqual([1, 1, 1, 1, 1])
			} finally {
				redis.thaw()
				await app.stop()
				await redis.stop()
			}
		},
		60_000,
	)
})

describe('the database store on PostgreSQL', () => {
	// Two instances starting together both create the limits table on first use; PostgreSQL can answer
	// the loser's CREATE TABLE IF NOT EXISTS with "already exists" (42P07) once the winner commits. An
	// event trigger makes this instance lose that race once, deterministically.
	test.runIf(inject('databaseKind') === 'postgres')(
		'losing the race to create the limits table still counts every request (no 500)',
		async () => {
			const databaseUrl = await freshDatabaseUrl()
			await withDatabase(databaseUrl, async (prisma) => {
				await prisma.$executeRawUnsafe(`CREATE SEQUENCE rate_limits_create_attempts`)
				await prisma.$executeRawUnsafe(`CREATE FUNCTION lose_rate_limits_race() RETURNS event_trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF current_query() ILIKE '%rate_limits%' AND nextval('rate_limits_create_attempts') = 1 THEN
						RAISE EXCEPTION 'relation "rate_limits" already exists' USING ERRCODE = 'duplicate_table';
					END IF;
				END $$`)
				await prisma.$executeRawUnsafe(
					`CREATE EVENT TRIGGER lose_rate_limits_race ON ddl_command_start WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION lose_rate_limits_race()`,
				)
			})
			const app = await startApp({ DATABASE_URL: databaseUrl, SMTP_URL: sink.url, TRUST_PROXY: '1' })
			try {
				const ip = uniqueIp()
				expect(await burst(app, ip), app.output()).toEqual(FIVE_AND_FIVE)
				const [counts] = await withDatabase(databaseUrl, (prisma) =>
					prisma.$queryRawUnsafe<Array<{ attempts: bigint; slots: bigint }>>(
						`SELECT (SELECT last_value FROM rate_limits_create_attempts) AS attempts, (SELECT count(*) FROM rate_limits WHERE key LIKE $1) AS slots`,
						`rl_contact:${ip}#%`,
					),
				)
				// The table was made on the second try, and the five accepted submissions hold their slots in it.
				expect({ attempts: Number(counts?.attempts), slots: Number(counts?.slots) }).toEqual({ attempts: 2, slots: 5 })
			} finally {
				await app.stop()
			}
		},
	)

	test.runIf(inject('databaseKind') === 'postgres')('two instances share one limit through the database', async () => {
		const databaseUrl = await freshDatabaseUrl()
		const env = { DATABASE_URL: databaseUrl, SMTP_URL: sink.url, TRUST_PROXY: '1' }
		const [first, second] = await Promise.all([startApp(env), startApp(env)])
		try {
			const ip = uniqueIp()
			const responses = await Promise.all(
				Array.from({ length: 10 }, (_, i) => postJson(`${(i % 2 ? first : second).url}/api/contact`, valid, { 'X-Forwarded-For': ip })),
			)
			const statuses = responses.map((r) => r.status).sort()
			const logs = `statuses ${statuses.join(' ')}\n--- first instance\n${first.output()}\n--- second instance\n${second.output()}`
			expect(statuses, logs).toEqual(FIVE_AND_FIVE)
			// One row per accepted submission (its slot), expiring a minute after it, whichever instance took it.
			const rows = await withDatabase(databaseUrl, (prisma) =>
				prisma.$queryRawUnsafe<Array<{ key: string; seconds_left: number }>>(
					`SELECT key, extract(epoch FROM (to_timestamp(expire / 1000.0) - now()))::float8 AS seconds_left FROM rate_limits WHERE key LIKE $1 ORDER BY key`,
					`rl_contact:${ip}#%`,
				),
			)
			expect(rows.map((row) => row.key)).toEqual([0, 1, 2, 3, 4].map((slot) => `rl_contact:${ip}#${slot}`))
			for (const row of rows) expect(row.seconds_left).toBeGreaterThan(50)
			for (const row of rows) expect(row.seconds_left).toBeLessThanOrEqual(60)
		} finally {
			await Promise.all([first.stop(), second.stop()])
		}
	})
})
