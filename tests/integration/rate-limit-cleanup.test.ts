import { describe, expect, inject, test } from 'vitest'
import { sweepExpiredLimits } from '../../app/utils/rate-limit-cleanup.server.ts'
import { freshDatabaseUrl, withDatabase } from '../support/database.ts'

// The rate limits' expired rows are swept on Prisma's pool, in batches (decision 0026), instead of the
// library's one DELETE per limiter on the connection every request shares.

const HOUR = 60 * 60_000

describe.runIf(inject('databaseKind') === 'postgres')('sweeping expired rate-limit rows', () => {
	test('deletes the rows expired over an hour ago, in as many batches as it takes, and keeps the others', async () => {
		const now = Date.now()
		const remaining = await withDatabase(await freshDatabaseUrl(), async (prisma) => {
			// The table as rate-limiter-flexible creates it.
			await prisma.$executeRawUnsafe(
				`CREATE TABLE "rate_limits" (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`,
			)
			await prisma.$executeRawUnsafe(
				`INSERT INTO "rate_limits" SELECT 'old:' || i, 1, $1::bigint - i FROM generate_series(1, 2500) AS i`,
				now - HOUR - 1,
			)
			await prisma.$executeRawUnsafe(
				`INSERT INTO "rate_limits" SELECT 'recent:' || i, 1, $1::bigint FROM generate_series(1, 10) AS i`,
				now - HOUR / 2,
			)
			await prisma.$executeRawUnsafe(
				`INSERT INTO "rate_limits" SELECT 'live:' || i, 3, $1::bigint FROM generate_series(1, 10) AS i`,
				now + 30_000,
			)
			await prisma.$executeRawUnsafe(`INSERT INTO "rate_limits" VALUES ('forever', 1, NULL)`)
			// Each statement's count, so that the batches show: one DELETE of every row would count 2 500 too.
			const deletedPerStatement: number[] = []
			const run = async (text: string, values: unknown[]) => {
				const deleted = await prisma.$executeRawUnsafe(text, ...values)
				deletedPerStatement.push(deleted)
				return deleted
			}
			expect(await sweepExpiredLimits(run, now)).toBe(2500)
			expect(deletedPerStatement).toEqual([1000, 1000, 500])
			expect(await sweepExpiredLimits(run, now)).toBe(0)
			return prisma.$queryRawUnsafe<Array<{ prefix: string; rows: number }>>(
				`SELECT split_part(key, ':', 1) AS prefix, count(*)::int AS rows FROM "rate_limits" GROUP BY 1 ORDER BY 1`,
			)
		})
		expect(remaining).toEqual([
			{ prefix: 'forever', rows: 1 },
			{ prefix: 'live', rows: 10 },
			{ prefix: 'recent', rows: 10 },
		])
	})
})
