import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import { db, postgresStatements, sqlStateOf } from './db.server.ts'
import { RATE_LIMITS_TABLE, scheduleExpiredLimitsSweep } from './rate-limit-cleanup.server.ts'
import { env } from './env.server.ts'
import { noteOncePerMinute } from './log-note.server.ts'

// Where limits live (contract.md §1, REDIS_URL): Redis when set; else the database when it is
// PostgreSQL, so several instances share one limit; else memory (the embedded database allows one
// process anyway). Each store counts atomically, so a concurrent burst lets exactly `points` through.

export type LimitOutcome =
	| {
			allowed: true
			/** Gives the point back, e.g. when the work failed on our side and the client is told to retry. */
			refund: () => Promise<void>
	  }
	| { allowed: false; retryAfterSeconds: number }

export type Limiter = {
	consume: (key: string) => Promise<LimitOutcome>
}

let redis: Redis | undefined
// A count takes well under a millisecond on a healthy Redis; a request waits at most this for one.
const REDIS_COMMAND_TIMEOUT_MS = 1_000

async function redisClient(url: string) {
	// Loaded only when REDIS_URL is set.
	const { Redis } = await import('ioredis')
	if (redis) return redis
	// No offline queue: a Redis outage must fail fast into the insurance limiter, not queue requests.
	// A Redis that keeps its connection but does not answer (stopped, swapping, a dead peer behind a
	// proxy) fails every command after commandTimeout: without it, every limited request waited for good.
	const client = new Redis(url, {
		enableOfflineQueue: false,
		maxRetriesPerRequest: 1,
		connectTimeout: 2_000,
		commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
		lazyConnect: false,
	})
	// ioredis reconnects by itself and emits an error per failed attempt: note the outage once, and
	// its end, since meanwhile each instance counts in its own memory (N instances allow N × the limit).
	let down = false
	client.on('error', (error: Error) => {
		if (down) return
		down = true
		// A refused password never comes back by itself: say where to look.
		const hint = /^(WRONGPASS|NOAUTH|NOPERM)/.test(error.message) ? " (check REDIS_URL's user and password)" : ''
		console.error(`rate limits: Redis unavailable (${error.message})${hint}; counting in this instance's memory until it is back`)
	})
	client.on('ready', () => {
		if (!down) return
		down = false
		console.log('rate limits: Redis is back; limits are shared again')
	})
	redis = client
	return client
}

/**
 * A request the shared store did not count, counted in this instance's memory instead. Said in the log
 * when first seen and then at most once a minute while it lasts: meanwhile each instance counts on its
 * own (N instances allow N × the limit), which an operator should know. (Redis also says when its
 * connection goes and comes back, above; a Redis that does not answer says it only here.)
 */
const noteCountedInMemory = noteOncePerMinute((count, store: string, cause?: string) =>
	console.error(
		`rate limits: ${store} did not count ${count} request(s) since the last note${cause ? ` (${cause})` : ''}; each instance counts in its own memory meanwhile`,
	),
)

type StoreBase = { keyPrefix: string; points: number; duration: number }

/** The in-memory count the library falls back to when the shared store fails to count: noted as above. */
function noticedInsurance(base: StoreBase, store: string) {
	const memory = new RateLimiterMemory(base)
	const consume = memory.consume.bind(memory)
	memory.consume = (...args: Parameters<RateLimiterMemory['consume']>) => {
		noteCountedInMemory(store)
		return consume(...args)
	}
	return memory
}

/**
 * Where the limits are counted, for the start-up log (after the database is open): an operator running
 * several instances sees whether they share their limits. Never the Redis URL, which can hold a password.
 * Redis is connected to here, so that the line says whether it answered: it said "shared" of a Redis
 * that was down or refused the password, until a first request found out.
 */
export async function limitsStoreInWords(): Promise<string> {
	const kind = storeKind()
	if (kind === 'redis' && !(await redisReady(await redisClient(env().REDIS_URL!))))
		return 'to be counted in Redis (REDIS_URL), which has not answered yet: until it does, each instance counts in its own memory (N instances allow N × the limit)'
	return STORE_IN_WORDS[kind]
}

/** Whether the connection is ready, waiting for it briefly (it may still be connecting). */
async function redisReady(client: Redis) {
	if (client.status === 'ready') return true
	await new Promise((resolve) => {
		const timer = setTimeout(resolve, 2_000)
		client.once('ready', () => (clearTimeout(timer), resolve(undefined)))
	})
	// Read again after the wait (TypeScript narrowed it above).
	return (client.status as string) === 'ready'
}

type StoreKind = 'redis' | 'postgres' | 'memory'

/** The one choice of store (see the top of this file), for the stores and for the start-up log. */
function storeKind(): StoreKind {
	if (env().REDIS_URL) return 'redis'
	return postgresStatements() ? 'postgres' : 'memory'
}

/** The shared store's name in the log's notes. (A memory store never fails over, so is never named.) */
const STORE_NAME: Record<StoreKind, string> = { redis: 'Redis', postgres: 'PostgreSQL', memory: 'memory' }

const STORE_IN_WORDS: Record<StoreKind, string> = {
	redis: 'counted in Redis (REDIS_URL), shared by every instance that uses it',
	postgres: 'counted in PostgreSQL (the rate_limits table), shared by every instance on this database',
	memory: "counted in this process's memory (the embedded database serves one process)",
}

/** duplicate_table, duplicate_object: what a concurrent CREATE TABLE IF NOT EXISTS can still raise. */
const TABLE_CREATED_CONCURRENTLY = new Set(['42P07', '42710'])

async function createStore(name: string, points: number, duration: number): Promise<[RateLimiterAbstract, string]> {
	const base = { keyPrefix: `rl_${name}`, points, duration }
	// If the shared store fails, count in memory rather than refuse every visitor or let all through.
	const kind = storeKind()
	if (kind === 'redis') {
		const client = await redisClient(env().REDIS_URL!)
		// Until the connection is ready every command fails over to the insurance limiter, which would
		// count a start-up burst apart from Redis: wait for it (briefly) before the first count.
		await redisReady(client)
		return [new RateLimiterRedis({ ...base, storeClient: client, insuranceLimiter: noticedInsurance(base, STORE_NAME.redis) }), 'redis']
	}
	const statements = postgresStatements()
	if (statements) {
		// The library creates its table on first use (CREATE TABLE IF NOT EXISTS) and takes only 23505 as
		// "another instance made it". PostgreSQL checks IF NOT EXISTS before it creates, so an instance
		// starting beside another can still get 42P07 / 42710 once the other commits: the table exists
		// then, and a second try succeeds. (Seen as a 500 on a first request in a two-instance test.)
		const open = () =>
			new Promise<RateLimiterPostgres>((resolve, reject) => {
				const created: RateLimiterPostgres = new RateLimiterPostgres(
					{
						...base,
						// The library takes anything with a pool's `query` (it neither checks out nor releases).
						storeClient: statements,
						storeType: 'pool',
						tableName: RATE_LIMITS_TABLE,
						// Expired rows are swept on Prisma's pool, not on the shared connection (rate-limit-cleanup.server.ts).
						clearExpiredByTimeout: false,
						insuranceLimiter: noticedInsurance(base, STORE_NAME.postgres),
					},
					(error?: Error) => (error ? reject(error) : resolve(created)),
				)
			})
		const limiter = await open().catch((error: unknown) => {
			if (!TABLE_CREATED_CONCURRENTLY.has(sqlStateOf(error) ?? '')) throw error
			return open()
		})
		scheduleExpiredLimitsSweep((text, values) => db().$executeRawUnsafe(text, ...values))
		return [limiter, 'postgres']
	}
	return [new RateLimiterMemory(base), 'memory']
}

// `npm run bench` and `npm run soak` measure the paths behind the limits, not the 429 path, so they set
// BENCH_RAISE_LIMITS=1 (honoured on a loopback APP_URL only: env.server.ts). Counting still happens, in
// the same store, so the bench measures the same work.
const RAISED_POINTS = 1_000_000

type LimitSettings = { points: number; durationSeconds: number }

/**
 * The store, created on first use (after start-up has validated the configuration). If it cannot be
 * created (PostgreSQL down when the first request comes), that request is counted in memory, as the
 * store's insurance counts once it exists, and the next request tries the store again: a limit must
 * not turn an outage of its store into 500s for the feature it guards.
 */
function lazyStore(name: string, points: number, durationSeconds: number) {
	let store: Promise<[RateLimiterAbstract, string]> | undefined
	let ready: [RateLimiterAbstract, string] | undefined
	let fallback: RateLimiterMemory | undefined
	return async (): Promise<[RateLimiterAbstract, string]> => {
		if (ready) return ready
		store ??= createStore(name, points, durationSeconds).catch((error) => {
			store = undefined
			throw error
		})
		try {
			ready = await store
			return ready
		} catch (error) {
			noteCountedInMemory(STORE_NAME[storeKind()], (error as Error).message)
			fallback ??= new RateLimiterMemory({ keyPrefix: `rl_${name}`, points, duration: durationSeconds })
			return [fallback, 'memory']
		}
	}
}

/** One atomic count in the store: undefined when it took a point, else the ms until the window ends. */
async function take(rateLimiter: RateLimiterAbstract, key: string): Promise<number | undefined> {
	try {
		await rateLimiter.consume(key)
		return undefined
	} catch (rejection) {
		if (rejection instanceof RateLimiterRes) return rejection.msBeforeNext
		throw rejection
	}
}

const refused = (msBeforeNext: number): LimitOutcome => ({
	allowed: false,
	retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)),
})

const raisedForBench = () => env().limitsRaisedForBench

/**
 * `points` per window of `durationSeconds` that starts with a key's first request (the library's
 * fixed window): the per-user write limits (docs/decisions/0008-abuse-limits.md).
 */
export function createLimiter(name: string, { points, durationSeconds }: LimitSettings): Limiter {
	const limiter = lazyStore(name, points, durationSeconds)
	const raisedLimiter = lazyStore(name, RAISED_POINTS, durationSeconds)
	return {
		async consume(key) {
			const [rateLimiter] = await (raisedForBench() ? raisedLimiter : limiter)()
			const msBeforeNext = await take(rateLimiter, key)
			if (msBeforeNext !== undefined) return refused(msBeforeNext)
			return { allowed: true, refund: () => rateLimiter.reward(key, 1).then(noop, noop) }
		},
	}
}

/**
 * At most `points` per key in any `durationSeconds` (a rolling window: contract.md §2, "5 contact
 * submissions per rolling minute"). Each accepted request holds one of `points` slots, a one-point
 * fixed window of its own that starts when the request takes it, so a slot is busy for exactly
 * `durationSeconds` after the request it stands for. A request takes the first free slot, in order;
 * each take is atomic in the store, so a concurrent burst still lets exactly `points` through. When
 * every slot is busy, the oldest frees first: that is the Retry-After. A visitor's first submission
 * costs one count, as with a fixed window; only repeated ones look at further slots.
 */
export function createRollingLimiter(name: string, { points, durationSeconds }: LimitSettings): Limiter {
	const slots = lazyStore(name, 1, durationSeconds)
	// The bench measures the path behind the limit: one fixed window with the raised ceiling.
	const raised = createLimiter(name, { points: RAISED_POINTS, durationSeconds })
	return {
		async consume(key) {
			if (raisedForBench()) return raised.consume(key)
			const [rateLimiter] = await slots()
			let soonestFree = Infinity
			for (let slot = 0; slot < points; slot++) {
				const slotKey = `${key}#${slot}`
				const msBeforeNext = await take(rateLimiter, slotKey)
				if (msBeforeNext === undefined) return { allowed: true, refund: () => rateLimiter.delete(slotKey).then(noop, noop) }
				soonestFree = Math.min(soonestFree, msBeforeNext)
			}
			return refused(soonestFree)
		},
	}
}

function noop() {}
