// Webhook events: building, signing and delivering them the way Stripe does.
import Stripe from 'stripe'
import { nowSeconds, randomId } from '../http-util.js'
import { STRIPE_API_VERSION, type StripeObject } from './objects.js'

export interface StripeEvent {
	id: string
	object: 'event'
	api_version: string
	created: number
	data: { object: StripeObject; previous_attributes?: Record<string, unknown> }
	livemode: boolean
	pending_webhooks: number
	request: { id: string | null; idempotency_key: string | null }
	type: string
}

export function makeEvent(
	type: string,
	object: StripeObject,
	opts: { created?: number; previousAttributes?: Record<string, unknown>; id?: string } = {},
): StripeEvent {
	return {
		id: opts.id ?? `evt_${randomId(24)}`,
		object: 'event',
		api_version: STRIPE_API_VERSION,
		created: opts.created ?? nowSeconds(),
		// A snapshot: later changes to the stored object must not alter an event already made.
		data: {
			object: structuredClone(object),
			...(opts.previousAttributes ? { previous_attributes: opts.previousAttributes } : {}),
		},
		// An event is of its object's mode (the fake's objects are test-mode unless a live key made them).
		livemode: object.livemode === true,
		pending_webhooks: 1,
		request: { id: `req_${randomId(14)}`, idempotency_key: null },
		type,
	}
}

export interface SignOptions {
	/** Override the signing secret (wrong-secret tests). */
	secret?: string
	/** Unix seconds; an old one makes a replayed/stale signature. */
	timestamp?: number
}

/**
 * Stripe sends pretty-printed JSON; signing that exact text means an app that re-serializes the
 * parsed body instead of verifying the raw bytes fails, as it would in production.
 */
export function signEvent(event: StripeEvent | string, secret: string, opts: SignOptions = {}): { payload: string; header: string } {
	const payload = typeof event === 'string' ? event : JSON.stringify(event, null, 2)
	const header = Stripe.webhooks.generateTestHeaderString({
		payload,
		secret: opts.secret ?? secret,
		...(opts.timestamp === undefined ? {} : { timestamp: opts.timestamp }),
	})
	return { payload, header }
}

export interface Delivery {
	event: StripeEvent
	url: string
	status: number | null
	body: string
	error?: string
}

export async function deliverEvent(url: string, event: StripeEvent, secret: string, timeoutMs = 10_000): Promise<Delivery> {
	const { payload, header } = signEvent(event, secret)
	try {
		const res = await fetch(url, {
			method: 'POST',
			headers: {
				'Content-Type': 'application/json; charset=utf-8',
				'Stripe-Signature': header,
				'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
			},
			body: payload,
			signal: AbortSignal.timeout(timeoutMs),
		})
		return { event, url, status: res.status, body: await res.text() }
	} catch (error) {
		return { event, url, status: null, body: '', error: String(error) }
	}
}
