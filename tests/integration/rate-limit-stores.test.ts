import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl, withDatabase } from '../support/database.ts'
import { postJson, uniqueIp } from '../support/http.ts'
import { startSmtpSink, type SmtpSink } from '../mocks/smtp.ts'
import { hasRedis, startTestRedis } from '../support/redis.ts'

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
			const ip = uniqueIp()
			expect(await burst(app, ip)).toEqual(FIVE_AND_FIVE)
			const client = new Redis(redis.url)
			expect(Number(await client.get(`rl_contact:${ip}`))).toBe(10)
			client.disconnect()
		} finally {
			await app.stop()
			await redis.stop()
		}
	})
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
					prisma.$queryRawUnsafe<Array<{ attempts: bigint; points: number }>>(
						`SELECT (SELECT last_value FROM rate_limits_create_attempts) AS attempts, (SELECT points FROM rate_limits WHERE key = $1) AS points`,
						`rl_contact:${ip}`,
					),
				)
				// The table was made on the second try, and all ten requests were counted in it.
				expect({ attempts: Number(counts?.attempts), points: counts?.points }).toEqual({ attempts: 2, points: 10 })
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
			const rows = await withDatabase(databaseUrl, (prisma) =>
				prisma.$queryRawUnsafe<Array<{ points: number }>>(`SELECT points FROM rate_limits WHERE key = $1`, `rl_contact:${ip}`),
			)
			expect(rows[0]?.points).toBe(10)
		} finally {
			await Promise.all([first.stop(), second.stop()])
		}
	})
})
