// The rate limits' rows in PostgreSQL (`rate_limits`, made by rate-limiter-flexible) are deleted here
// rather than by the library. Its own cleanup is one `DELETE … WHERE expire < $1` per limiter every
// five minutes, a scan of the whole table, and it would run on the connection every request's
// statements share (decision 0026): a table grown by many visitors' addresses would hold them all up.
// This runs on Prisma's pool instead, once per process, in short batches that each commit at once,
// so a count waiting for a row being deleted waits for one small batch, not the whole sweep.

const SWEEP_INTERVAL_MS = 5 * 60_000
/** As the library: rows that expired more than an hour ago. */
const EXPIRED_FOR_MS = 60 * 60_000
const BATCH = 1_000
/** A sweep stops after this many rows; the next sweep goes on. Bounds the work one sweep may take. */
const MAX_ROWS_PER_SWEEP = 100_000

/** Runs one statement and resolves with the number of rows it changed. */
export type RunStatement = (text: string, values: unknown[]) => Promise<number>

/** The table rate-limiter-flexible keeps the limits in (its `tableName`, set in rate-limit.server.ts). */
export const RATE_LIMITS_TABLE = 'rate_limits'

const DELETE_BATCH = `DELETE FROM "${RATE_LIMITS_TABLE}" WHERE key IN (
	SELECT key FROM "${RATE_LIMITS_TABLE}" WHERE expire < $1 LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
)`

/** Deletes the rows that expired more than an hour before `now`; resolves with how many it deleted. */
export async function sweepExpiredLimits(run: RunStatement, now = Date.now()): Promise<number> {
	let deleted = 0
	while (deleted < MAX_ROWS_PER_SWEEP) {
		const batch = await run(DELETE_BATCH, [now - EXPIRED_FOR_MS])
		deleted += batch
		if (batch < BATCH) break
	}
	return deleted
}

let scheduled = false

/**
 * Sweeps every five minutes from now on (once per process, however many limiters). A failed sweep is
 * not worth a log line: nothing depends on it but the table's size, and the next one tries again.
 */
export function scheduleExpiredLimitsSweep(run: RunStatement) {
	if (scheduled) return
	scheduled = true
	const sweep = () => {
		sweepExpiredLimits(run)
			.catch(() => {})
			.finally(() => setTimeout(sweep, SWEEP_INTERVAL_MS).unref())
	}
	setTimeout(sweep, SWEEP_INTERVAL_MS).unref()
}
