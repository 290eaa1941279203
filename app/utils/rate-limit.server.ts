import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import { postgresPool, sqlStateOf } from './db.server.ts'
import { env } from './env.server.ts'

// Where limits live (contract.md §1, REDIS_URL): Redis when set; else the database when it is
// PostgreSQL, so several instances share one limit; else memory (the embedded database allows one
// process anyway). Each store counts atomically, so a concurrent burst lets exactly `points` through.

export type LimitOutcome = { allowed: true } | { allowed: false; retryAfterSeconds: number }

export type Limiter = {
	consume: (key: string) => Promise<LimitOutcome>
	/** Gives a point back, e.g. when the work failed on our side and the client is told to retry. */
	refund: (key: string) => Promise<void>
	store: () => Promise<string>
}

let redis: Redis | undefined

async function redisClient(url: string) {
	// Loaded only when REDIS_URL is set.
	const { Redis } = await import('ioredis')
	// No offline queue: a Redis outage must fail fast into the insurance limiter, not queue requests.
	redis ??= new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, lazyConnect: false })
	redis.on('error', () => {})
	return redis
}

/** duplicate_table, duplicate_object: what a concurrent CREATE TABLE IF NOT EXISTS can still raise. */
const TABLE_CREATED_CONCURRENTLY = new Set(['42P07', '42710'])

async function createStore(name: string, points: number, duration: number): Promise<[RateLimiterAbstract, string]> {
	const base = { keyPrefix: `rl_${name}`, points, duration }
	// If the shared store fails, count in memory rather than refuse every visitor or let all through.
	const insuranceLimiter = new RateLimiterMemory(base)
	const config = env()
	if (config.REDIS_URL) {
		const client = await redisClient(config.REDIS_URL)
		// Until the connection is ready every command fails over to the insurance limiter, which would
		// count a start-up burst apart from Redis: wait for it (briefly) before the first count.
		if (client.status !== 'ready') {
			await new Promise((resolve) => {
				const timer = setTimeout(resolve, 2_000)
				client.once('ready', () => (clearTimeout(timer), resolve(undefined)))
			})
		}
		return [new RateLimiterRedis({ ...base, storeClient: client, insuranceLimiter }), 'redis']
	}
	const pool = postgresPool()
	if (pool) {
		// The library creates its table on first use (CREATE TABLE IF NOT EXISTS) and takes only 23505 as
		// "another instance made it". PostgreSQL checks IF NOT EXISTS before it creates, so an instance
		// starting beside another can still get 42P07 / 42710 once the other commits: the table exists
		// then, and a second try succeeds. (Seen as a 500 on a first request in a two-instance test.)
		const open = () =>
			new Promise<RateLimiterPostgres>((resolve, reject) => {
				const created: RateLimiterPostgres = new RateLimiterPostgres(
					{ ...base, storeClient: pool, storeType: 'pool', tableName: 'rate_limits', clearExpiredByTimeout: true, insuranceLimiter },
					(error?: Error) => (error ? reject(error) : resolve(created)),
				)
			})
		const limiter = await open().catch((error: unknown) => {
			if (!TABLE_CREATED_CONCURRENTLY.has(sqlStateOf(error) ?? '')) throw error
			return open()
		})
		return [limiter, 'postgres']
	}
	return [new RateLimiterMemory(base), 'memory']
}

/**
 * `npm run bench` and `npm run soak` measure the paths behind the limits, not the 429 path, so they
 * set BENCH_RAISE_LIMITS=1. It is honoured only when APP_URL is a loopback address: a deployed
 * service (public APP_URL) cannot turn its limits off by configuration. Counting still happens, in
 * the same store, so the bench measures the same work.
 */
export function limitsRaisedForBench(appUrl: string, setting: string | undefined) {
	const host = new URL(appUrl).hostname
	const loopback = host === 'localhost' || host === '127.0.0.1' || host === '[::1]'
	return setting === '1' && loopback
}

const RAISED_POINTS = 1_000_000

export function createLimiter(name: string, { points, durationSeconds }: { points: number; durationSeconds: number }): Limiter {
	let store: Promise<[RateLimiterAbstract, string]> | undefined
	const limiter = () => {
		// Created on first use, after start-up has validated the configuration.
		store ??= createStore(
			name,
			limitsRaisedForBench(env().APP_URL, process.env.BENCH_RAISE_LIMITS) ? RAISED_POINTS : points,
			durationSeconds,
		).catch((error) => {
			store = undefined // try the shared store again on the next request
			throw error
		})
		return store
	}
	return {
		async consume(key) {
			const [rateLimiter] = await limiter()
			try {
				await rateLimiter.consume(key)
				return { allowed: true }
			} catch (rejection) {
				if (rejection instanceof RateLimiterRes) {
					return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) }
				}
				throw rejection
			}
		},
		async refund(key) {
			const [rateLimiter] = await limiter()
			await rateLimiter.reward(key, 1).catch(() => {})
		},
		store: async () => (await limiter())[1],
	}
}
