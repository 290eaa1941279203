import type Stripe from 'stripe'
import { planOfPrice } from './plans.ts'
import { isLiveProcessorStatus } from './subscription-state.ts'

// What one of the processor's subscription objects says, read the same way by the webhook, the
// checkout return and the repeated-trial rules (decision 0013), so none of them reads it otherwise.

export function customerIdOf(subscription: Stripe.Subscription) {
	return typeof subscription.customer === 'string' ? subscription.customer : subscription.customer.id
}

/**
 * The item billing one of our plans. An operator may add an item of another product (an add-on) to a
 * subscription in the Dashboard, in any position: the plan is the item whose price is one of ours,
 * not whichever is listed first.
 */
export function planItemOf(subscription: Stripe.Subscription): Stripe.SubscriptionItem | null {
	return subscription.items.data.find((item) => planOfPrice(item.price) !== null) ?? null
}

/**
 * One of ours: it bills one of our plans. The processor account may sell other products to the same
 * customers; their subscriptions say nothing about the Callsheet plan, and are never shown or ended.
 */
export function isOurs(subscription: Stripe.Subscription) {
	return planItemOf(subscription) !== null
}

/** In this API version the period end lives on each item: the latest (contract: `current_period_end`). */
export function latestPeriodEnd(subscription: Stripe.Subscription): Date | null {
	const ends = periodEnds(subscription)
	return ends.length ? new Date(Math.max(...ends) * 1000) : null
}

function periodEnds(subscription: Stripe.Subscription) {
	return subscription.items.data.map((item) => item.current_period_end).filter((end): end is number => typeof end === 'number')
}

/**
 * Set to end: at the end of the period (`cancel_at_period_end`, the classic way) or at a date
 * (`cancel_at`). In flexible billing mode, Stripe's default for new subscriptions since API version
 * 2025-09-30, the customer portal's "cancel at end of period" sets `cancel_at` and leaves
 * `cancel_at_period_end` false; so does a Dashboard cancellation on a chosen date.
 * https://docs.stripe.com/billing/subscriptions/billing-mode/compare
 */
export function isSetToEnd(subscription: Stripe.Subscription) {
	return subscription.cancel_at_period_end || typeof subscription.cancel_at === 'number'
}

/**
 * When the subscription ends (live and set to end) or ended (no longer live), as the processor says;
 * null for one that renews, or an ended one that never started (`incomplete_expired` has no end).
 * Not the period end: a subscription cancelled at once, or on a chosen date, ends before it.
 */
export function endDateOf(subscription: Stripe.Subscription): Date | null {
	if (!isLiveProcessorStatus(subscription.status)) return seconds(subscription.ended_at)
	if (typeof subscription.cancel_at === 'number') return seconds(subscription.cancel_at)
	// cancel_at_period_end alone: Stripe ends it at the earliest item period end.
	const ends = periodEnds(subscription)
	return subscription.cancel_at_period_end && ends.length ? new Date(Math.min(...ends) * 1000) : null
}

const seconds = (value: number | null | undefined) => (typeof value === 'number' ? new Date(value * 1000) : null)
