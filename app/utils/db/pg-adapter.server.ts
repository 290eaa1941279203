import pg from 'pg'
import { PrismaPg } from '@prisma/adapter-pg'
import { cancelStatementGivenUp, QUERY_TIMED_OUT } from './cancel-statement.server.ts'

// @prisma/adapter-pg 6.19 cannot decode PostgreSQL's `name` type (oid 19), which the schema engine
// reads from pg_catalog during `migrate deploy`: "Column type 'name' could not be deserialized".
// `name` is text in all but length, so we report it as text (oid 25) on every pooled connection,
// which covers queries inside transactions too.
const NAME_OID = 19
const TEXT_OID = 25

type QueryResultLike = { fields?: Array<{ dataTypeID: number }> }

export function reportNameColumnsAsText<T>(result: T): T {
	for (const field of (result as QueryResultLike)?.fields ?? []) {
		if (field.dataTypeID === NAME_OID) field.dataTypeID = TEXT_OID
	}
	return result
}

// Both pool.query (plain queries) and each checked-out client (transactions) are patched; results of
// the callback style, which the adapter does not use, pass through untouched.
function patchQuery(target: pg.Pool | pg.PoolClient) {
	const query = target.query.bind(target) as (...args: unknown[]) => unknown
	target.query = ((...args: unknown[]) => {
		const result = query(...args)
		return result instanceof Promise ? result.then(reportNameColumnsAsText) : result
	}) as typeof target.query
}

const statementOf = (args: unknown[]) => {
	const first = args[0]
	const text = typeof first === 'string' ? first : (first as { text?: unknown } | undefined)?.text
	return typeof text === 'string' ? text.trim().toUpperCase() : ''
}

/**
 * A checked-out connection (a transaction's) that can no longer be trusted is destroyed at once, and
 * its later release is a no-op. @prisma/adapter-pg ends a transaction by sending COMMIT or ROLLBACK and
 * only then releasing the connection: if that statement fails (the connection was lost, or it waits
 * behind a statement that timed out), the connection was never released, and each such incident took
 * one of the pool's connections for the life of the process until every query waited for one. Prisma's
 * own transaction timer sends its ROLLBACK with nothing to catch a failure, which ended the process.
 *
 * - A failure that is not PostgreSQL's answer (a query timeout, a lost connection) leaves the
 *   connection mid-conversation: destroyed, which also ends the server's session and its locks.
 * - A failed COMMIT destroys the connection and still fails: whether it applied is unknown, and every
 *   write in a transaction here is safe to retry.
 * - A failed ROLLBACK destroys the connection and is taken as done: PostgreSQL discards the open
 *   transaction of a session that ends.
 */
function destroyOnBrokenTransaction(client: pg.PoolClient) {
	const query = client.query.bind(client) as (...args: unknown[]) => unknown
	const destroy = (error: Error) => {
		const release = client.release
		client.release = () => {}
		release.call(client, error)
	}
	client.query = ((...args: unknown[]) => {
		const result = query(...args)
		if (!(result instanceof Promise)) return result
		return result.catch((error: unknown) => {
			const statement = statementOf(args)
			const ending = statement === 'COMMIT' || statement === 'ROLLBACK'
			if (ending || !(error instanceof pg.DatabaseError)) {
				destroy(error instanceof Error ? error : new Error(String(error)))
				if (statement === 'ROLLBACK') return { command: 'ROLLBACK', rowCount: 0, rows: [], fields: [] }
			}
			throw error
		})
	}) as typeof client.query
}

export type PostgresDatabase = { pool: pg.Pool; factory: PrismaPg; close: () => Promise<void> }

/**
 * How long a query may go unanswered. A database that stops answering without closing its connections
 * (a network partition, a frozen host) would otherwise hold each request until the OS gives up on the
 * socket, many minutes later: the status fallback and "safe to retry" errors would never come, and
 * requests would pile up. Every query the app makes is a short lookup or write. Client-side rather
 * than PostgreSQL's statement_timeout, which connection poolers such as PgBouncer refuse as a start-up
 * parameter; pg-pool closes a connection whose query timed out.
 */
export const QUERY_TIMEOUT_MS = 5_000

/** How long opening a connection may take before the request that waits for it fails (safe to retry). */
export const CONNECT_TIMEOUT_MS = 5_000

/**
 * `exitWhenIdle`: for a command (the migration CLI) rather than the server. Idle connections are kept
 * 30 s, and with them the process: `prisma migrate deploy` sat idle for ~30 s after its work, and
 * every start-up that migrates waited for it.
 */
export function openPostgres(connectionString: string, options: { max?: number; exitWhenIdle?: boolean } = {}): PostgresDatabase {
	const pool = new pg.Pool({
		connectionString,
		max: options.max ?? 10,
		allowExitOnIdle: options.exitWhenIdle ?? false,
		connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
		idleTimeoutMillis: 30_000,
		query_timeout: QUERY_TIMEOUT_MS,
	})
	patchQuery(pool)
	pool.on('connect', (client) => {
		patchQuery(client)
		destroyOnBrokenTransaction(client)
	})
	pool.on('release', (error: Error | undefined, client: pg.PoolClient) => {
		if (error?.message === QUERY_TIMED_OUT) cancelStatementGivenUp(client, pool.options, CONNECT_TIMEOUT_MS)
	})
	// An idle client losing its server (restart, failover) must not crash the process.
	pool.on('error', (error) => console.error(`database: idle connection error: ${error.message}`))
	return { pool, factory: new PrismaPg(pool), close: () => pool.end() }
}

// An arbitrary key of our own (Prisma uses 72707369 for its lock).
const MIGRATION_LOCK_KEY = 20261122

/** Runs `work` holding a session advisory lock that every instance takes before migrating. */
export async function withMigrationLock<T>(pool: pg.Pool, work: () => Promise<T>): Promise<T> {
	const client = await pool.connect()
	let reusable = true
	try {
		await client.query(`SET statement_timeout = '180s'`)
		// Waiting for another instance's migration is the one query allowed to take long; said first, or
		// a start-up waiting minutes for it looked hung.
		const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK_KEY])
		if (!rows[0]?.locked) {
			console.log(`database: waiting for another instance's migration to finish (advisory lock ${MIGRATION_LOCK_KEY})`)
			await client.query({ text: 'SELECT pg_advisory_lock($1)', values: [MIGRATION_LOCK_KEY], query_timeout: 190_000 } as pg.QueryConfig)
		}
		try {
			return await work()
		} finally {
			await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {})
		}
	} finally {
		// The connection goes back to the app's pool: without the session's long timeout.
		await client.query('RESET statement_timeout').catch(() => (reusable = false))
		client.release(!reusable)
	}
}
