import type Stripe from 'stripe'
import { lookupKey, type Interval, type PaidPlan } from './plans.ts'

// Price ids change only when an operator edits the catalogue (npm run billing:sync): cache them, and
// look again after a while so an edit is picked up without a restart.
const TTL_MS = 10 * 60 * 1000
const cache = new Map<string, { priceId: string; expiresAt: number }>()

export class PriceNotFoundError extends Error {}

export async function priceIdFor(stripe: Stripe, plan: PaidPlan, interval: Interval): Promise<string> {
	const key = lookupKey(plan, interval)
	const hit = cache.get(key)
	if (hit && hit.expiresAt > Date.now()) return hit.priceId
	const prices = await stripe.prices.list({ lookup_keys: [key], active: true, limit: 1 })
	const price = prices.data[0]
	if (!price) throw new PriceNotFoundError(`No active price with lookup key ${key}: run npm run billing:sync`)
	cache.set(key, { priceId: price.id, expiresAt: Date.now() + TTL_MS })
	return price.id
}

/**
 * The processor refused a price id we gave it: archived (a sync replaced it while this process still
 * had it cached, answered "The price specified is inactive" with no error code) or gone with a reset
 * sandbox. Either way the error names the line item's price.
 */
export function isRefusedPrice(error: unknown) {
	const { param } = error as { param?: unknown }
	return typeof param === 'string' && /^line_items\[\d+\]\[price\]$/.test(param)
}

/** The plan's price id as the processor has it now, not as cached: after isRefusedPrice. */
export async function currentPriceIdFor(stripe: Stripe, plan: PaidPlan, interval: Interval): Promise<string> {
	cache.delete(lookupKey(plan, interval))
	return priceIdFor(stripe, plan, interval)
}
