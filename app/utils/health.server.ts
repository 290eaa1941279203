import { env } from './env.server.ts'

declare const __BUILD_COMMIT__: string

export const HEALTH_CACHE_SECONDS = 10

type HealthPayload = { ok: true; version: string; region: string; timestamp: string }

/** The probe's own headers (security headers come on top), for the route and the server's fast path. */
export const HEALTH_HEADERS = {
	'content-type': 'application/json; charset=utf-8',
	'cache-control': `public, max-age=${HEALTH_CACHE_SECONDS}, s-maxage=${HEALTH_CACHE_SECONDS}`,
} as const

let cached: { body: string; expiresAt: number } | undefined

function version() {
	const commit = env().COMMIT_SHA ?? (typeof __BUILD_COMMIT__ === 'string' ? __BUILD_COMMIT__ : '')
	return commit ? commit.slice(0, 7) : 'unknown'
}

/**
 * The liveness payload, built without touching the database or any other service and kept for 10 s,
 * so calls within that window get the same payload (same timestamp), as the edge cache would.
 */
export function healthBody(now = Date.now()): string {
	if (!cached || now >= cached.expiresAt) {
		const payload: HealthPayload = { ok: true, version: version(), region: env().REGION, timestamp: new Date(now).toISOString() }
		cached = { body: JSON.stringify(payload), expiresAt: now + HEALTH_CACHE_SECONDS * 1000 }
	}
	return cached.body
}
