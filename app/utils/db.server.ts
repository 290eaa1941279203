import { PrismaClient } from '#app/generated/prisma/client.ts'
import { databaseTarget } from './db/database-url.ts'
import { applyPendingMigrations } from './db/migrate.server.ts'
import type { PipelinedConnection } from './db/pipelined-connection.server.ts'

// Each database's driver is loaded only when that database is chosen: a PostgreSQL deployment never
// loads PGlite (PostgreSQL compiled to WebAssembly), and the embedded default never loads pg.

/** A read every request makes, as one prepared SQL statement (docs/decisions/0011-prepared-sql-for-per-request-reads.md). */
export type Statement = { name: string; text: string }
type SqlRunner = (statement: Statement, values: unknown[]) => Promise<unknown[]>

type Connection = {
	prisma: PrismaClient
	kind: 'postgres' | 'embedded'
	sql: SqlRunner
	/** PostgreSQL only: the connection the per-request statements share (rate limits count on it too). */
	statements?: PipelinedConnection
	close: () => Promise<void>
}

/**
 * Closing PostgreSQL's connections waits for the server to answer. One that stops answering (a
 * partitioned network, a frozen host) held the close, and with it the stopping process, until the
 * operating system gave up on the sockets, minutes later: a supervisor would kill it first. Past this
 * the close is given up (the connections close with the process). Not the embedded database: its close
 * writes its files, and is never cut short.
 */
export const POSTGRES_CLOSE_TIMEOUT_MS = 3_000

export class DatabaseCloseTimeout extends Error {
	override name = 'DatabaseCloseTimeout'
}

function closeWithin<T>(ms: number, close: () => Promise<T>): Promise<T> {
	let timer: NodeJS.Timeout | undefined
	const late = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new DatabaseCloseTimeout(`PostgreSQL did not answer the close within ${ms / 1000} s`)), ms)
		timer.unref()
	})
	return Promise.race([close(), late]).finally(() => clearTimeout(timer))
}

// Kept on globalThis so the dev server's module reloads reuse one connection (and one PGlite lock).
const holder = globalThis as typeof globalThis & { __callsheetDb?: Connection }

export type ConnectOptions = { databaseUrl: string | undefined; projectRoot: string; migrate?: boolean }

/** Opens the database chosen by DATABASE_URL and applies pending migrations before anyone queries it. */
export async function connectDatabase({ databaseUrl, projectRoot, migrate = true }: ConnectOptions) {
	if (holder.__callsheetDb) return holder.__callsheetDb
	const target = databaseTarget(databaseUrl)
	if (target.kind === 'postgres') {
		const { openPostgres, withMigrationLock, QUERY_TIMEOUT_MS, CONNECT_TIMEOUT_MS } = await import('./db/pg-adapter.server.ts')
		const { openPipelinedConnection } = await import('./db/pipelined-connection.server.ts')
		const database = openPostgres(target.url)
		try {
			if (migrate) {
				await applyPendingMigrations({
					projectRoot,
					query: (sql) => database.pool.query(sql),
					exclusive: (work) => withMigrationLock(database.pool, work),
					// The CLI child is told the database this server opened, not left to read it again.
					databaseUrl: target.url,
				})
			}
		} catch (error) {
			await database.close()
			throw error
		}
		const prisma = new PrismaClient({ adapter: database.factory })
		// Prisma's pool carries the writes and transactions; the reads every request makes share one
		// pipelined connection (decision 0026).
		const statements = openPipelinedConnection(target.url, { queryTimeoutMs: QUERY_TIMEOUT_MS, connectTimeoutMs: CONNECT_TIMEOUT_MS })
		holder.__callsheetDb = {
			prisma,
			kind: 'postgres',
			// Named: the connection parses and plans the statement once, then only binds values.
			sql: async ({ name, text }, values) => (await statements.query({ name, text, values })).rows,
			statements,
			close: () =>
				closeWithin(POSTGRES_CLOSE_TIMEOUT_MS, async () => (await prisma.$disconnect(), await statements.close(), await database.close())),
		}
		return holder.__callsheetDb
	}

	const { openEmbeddedDatabase } = await import('./db/pglite-adapter.server.ts')
	let database = await openEmbeddedDatabase(target.dataDir)
	if (migrate) {
		await applyPendingMigrations({
			projectRoot,
			query: (sql) => database.pglite.query(sql),
			// Only one process may have the folder open: close it while the migration process works.
			beforeDeploy: () => database.pglite.close(),
			lockToken: database.lock.token,
			databaseUrl: `file:${target.dataDir}`,
		})
		if (database.pglite.closed) database = await openEmbeddedDatabase(target.dataDir)
	}
	const prisma = new PrismaClient({ adapter: database.factory })
	const pglite = database.pglite
	holder.__callsheetDb = {
		prisma,
		kind: 'embedded',
		// PGlite runs one statement at a time and waits for an open transaction to end first.
		sql: async ({ text }, values) => (await pglite.query(text, values)).rows,
		close: async () => (await prisma.$disconnect(), await database.close()),
	}
	return holder.__callsheetDb
}

export async function disconnectDatabase() {
	const connection = holder.__callsheetDb
	holder.__callsheetDb = undefined
	await connection?.close()
}

export function db(): PrismaClient {
	if (!holder.__callsheetDb) throw new Error('The database is not connected: call connectDatabase() at start-up.')
	return holder.__callsheetDb.prisma
}

/**
 * Rows of a prepared read, on whichever database is connected. Both speak PostgreSQL, so one SQL text
 * serves both; table and column names are those of prisma/schema.prisma (quoted, as Prisma creates them).
 */
export async function queryRows<Row>(statement: Statement, values: unknown[]): Promise<Row[]> {
	if (!holder.__callsheetDb) throw new Error('The database is not connected: call connectDatabase() at start-up.')
	return (await holder.__callsheetDb.sql(statement, values)) as Row[]
}

const DATABASE_CLOCK = { name: 'database_clock', text: 'SELECT clock_timestamp() AS "now"' }

/**
 * The database's clock: one clock for every instance, and one no instance's NTP step moves. Readings of
 * the processor are ordered by when they were made (decision 0013); stamped by each instance's own
 * clock, a later reading on an instance whose clock was behind lost to an older one, and an event
 * answered 200 (a cancellation) was never applied.
 */
export async function databaseNow(): Promise<Date> {
	const [row] = await queryRows<{ now: Date }>(DATABASE_CLOCK, [])
	return new Date(row!.now)
}

/** The PostgreSQL error code (SQLSTATE) of a failed prepared read, e.g. 42P01 for a missing table. */
export function sqlStateOf(error: unknown): string | undefined {
	const code = (error as { code?: unknown } | null)?.code
	return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

export function databaseKind() {
	return holder.__callsheetDb?.kind
}

/** On PostgreSQL, the connection the per-request statements share, for the rate limits to count on. */
export function postgresStatements() {
	return holder.__callsheetDb?.statements
}
