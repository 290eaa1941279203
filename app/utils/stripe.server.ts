import crypto from 'node:crypto'
import Stripe from 'stripe'
import { env } from './env.server.ts'

let client: Stripe | undefined

type ClientOptions = { timeout: number; maxNetworkRetries: number }

/** A client for STRIPE_SECRET_KEY/STRIPE_API_URL; operators' scripts pass longer timeouts. */
export function createStripeClient(secretKey: string, apiUrl: string | undefined, { timeout, maxNetworkRetries }: ClientOptions) {
	const api = apiUrl ? new URL(apiUrl) : undefined
	return new Stripe(secretKey, {
		maxNetworkRetries,
		timeout,
		telemetry: false,
		...(api
			? {
					host: api.hostname,
					port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)),
					protocol: api.protocol.replace(':', '') as 'http' | 'https',
				}
			: {}),
	})
}

/**
 * The processor's SDK, or null when STRIPE_SECRET_KEY is unset. Timeouts and retries are set on
 * purpose: a visitor waits on checkout, and the SDK's defaults (80 s, 2 retries) would hold them for
 * minutes. One retry is safe because every write carries an idempotency key.
 */
export function stripe(): Stripe | null {
	const config = env()
	if (!config.STRIPE_SECRET_KEY) return null
	client ??= createStripeClient(config.STRIPE_SECRET_KEY, config.STRIPE_API_URL, { timeout: 5_000, maxNetworkRetries: 1 })
	return client
}

/**
 * The mode of STRIPE_SECRET_KEY, from its prefix (`sk_live_`, `rk_test_`, …); undefined when unset or
 * of no known form. Every object and event the processor sends carries its mode as `livemode`.
 */
export function secretKeyMode(): 'live' | 'test' | undefined {
	const mode = /^[sr]k_(live|test)_/.exec(env().STRIPE_SECRET_KEY ?? '')?.[1]
	return mode === 'live' || mode === 'test' ? mode : undefined
}

/**
 * The processor's "no such object" for a live one asked with a test key: Stripe's 404 names the other
 * mode ("…; a similar object exists in live mode, but a test mode key was used to make this request").
 * That is an instance configured wrong (a staging key on the production database, one instance of a
 * rollout), not an object that is gone: nothing it reads may drop or replace what live keys made.
 * (A live key meeting test objects is the switch from test keys to live ones, which replaces them: 0029.)
 */
export function isLiveObjectAskedWithTestKey(error: unknown): boolean {
	const { code, message } = error as { code?: unknown; message?: unknown }
	return (
		// Stripe words it so only for a key that is not live; a key of no known form is not taken as live.
		secretKeyMode() !== 'live' &&
		code === 'resource_missing' &&
		typeof message === 'string' &&
		message.includes('a similar object exists in live mode')
	)
}

/**
 * The processor does not know the object: deleted, or of the other mode's key where that key is live
 * (the switch from test keys to live ones, 0029). Not a live object asked for with a test key.
 */
export function isGoneAtProcessor(error: unknown): boolean {
	return (error as { code?: unknown }).code === 'resource_missing' && !isLiveObjectAskedWithTestKey(error)
}

/**
 * Whether billing is on at all (contract: checkout answers 503 processor_not_configured without the
 * key). Routes ask first, so that nothing is read or created for the user while billing is off, and a
 * database fault cannot turn "billing is off" into a 500.
 */
export function billingConfigured() {
	return stripe() !== null
}

/**
 * Starts an SDK call with V8 capturing no stack frames: for checkout, a call on every request.
 * stripe-node formats a stack trace at the start of every call (`new Error().stack` in
 * StripeResource#_makeRequest) only to append it to an error it may reject with later; formatting
 * it was ~3 % of a checkout's CPU under load. The limit is back before the call returns, so nothing
 * else runs meanwhile (JavaScript runs one thing at a time): only that capture is empty, and the
 * errors the call rejects with keep their own stack. Where a failure came from is in our log line.
 */
export function withoutCallSiteTrace<T>(startCall: () => T): T {
	const limit = Error.stackTraceLimit
	Error.stackTraceLimit = 0
	try {
		return startCall()
	} finally {
		Error.stackTraceLimit = limit
	}
}

/** The processor failed on its side (5xx), whether first answered or replayed under an idempotency key. */
const failedAtProcessor = (error: unknown) => ((error as { statusCode?: number }).statusCode ?? 0) >= 500

/**
 * A create call under `key`, tried once more under a key of its own after a 5xx. Stripe saves a
 * request's result under its idempotency key "including 500 errors" and replays it for 24 hours
 * (https://docs.stripe.com/api/idempotent_requests), and the SDK's own retries reuse the key: without
 * this, one failure on the processor's side would fail every later call under that key for a day.
 * The failed attempt may still have created its object: `alreadyMade` finds it where a caller can
 * (then it is used, and nothing is made twice); otherwise each caller says why an unused one is harmless.
 */
export async function createOnceUnder<T>(
	key: string,
	create: (idempotencyKey: string) => Promise<T>,
	{ alreadyMade }: { alreadyMade?: () => Promise<T | null> } = {},
): Promise<T> {
	try {
		return await create(key)
	} catch (error) {
		if (!failedAtProcessor(error)) throw error
		const made = await alreadyMade?.()
		return made ?? create(`${key}-after-failure-${crypto.randomUUID()}`)
	}
}

/**
 * Whether a webhook delivery's `Stripe-Signature` is valid for `rawBody` under the signing secret (and
 * recent enough: the SDK's tolerance against replays). Needs no API key: a delivery is judged by its
 * signature whether or not STRIPE_SECRET_KEY is set.
 */
export function hasValidWebhookSignature(rawBody: string, signature: string | null, secret: string): boolean {
	const verifier = Stripe.webhooks.signature
	if (!verifier) throw new Error('billing: this Stripe SDK build cannot verify webhook signatures')
	try {
		verifier.verifyHeader(rawBody, signature ?? '', secret)
		return true
	} catch {
		return false
	}
}
