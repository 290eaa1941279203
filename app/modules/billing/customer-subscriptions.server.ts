import type Stripe from 'stripe'
import { isLiveProcessorStatus } from './subscription-state.ts'
import { customerIdOf } from './subscription-store.server.ts'

// docs/decisions/0013: a customer can hold several subscriptions at once (two checkouts left open in
// two tabs and both paid). Which one the user sees, and whether a new trial is a repeated one, is
// decided from the processor's own list, read fresh: never from what we stored, which may be behind.

/** Failures worth a retry by the processor; anything else means the list cannot be read here. */
function isTransient(error: unknown) {
	const { type, statusCode } = error as { type?: string; statusCode?: number }
	return type === 'StripeConnectionError' || type === 'StripeRateLimitError' || (typeof statusCode === 'number' && statusCode >= 500)
}

/**
 * The customer's other subscriptions that have not been cancelled, or null when the list cannot be
 * read as one (a 4xx, or a body without `data`): the caller then decides from the one subscription it
 * read. A connection failure, 429 or 5xx throws, so the webhook answers 500 and is retried.
 */
export async function otherSubscriptionsOf(processor: Stripe, subscription: Stripe.Subscription): Promise<Stripe.Subscription[] | null> {
	try {
		// Stripe's default list leaves out cancelled subscriptions; a customer holds a handful at most.
		const page = await processor.subscriptions.list({ customer: customerIdOf(subscription), limit: 100 })
		return Array.isArray(page?.data) ? page.data.filter((other) => other.id !== subscription.id) : null
	} catch (error) {
		if (isTransient(error)) throw error
		console.warn(
			`billing: could not list the subscriptions of ${customerIdOf(subscription)}; deciding from ${subscription.id} alone: ${(error as Error).message}`,
		)
		return null
	}
}

/** Live, and not set to end: a subscription the customer means to keep. */
function isKept(subscription: Stripe.Subscription) {
	return isLiveProcessorStatus(subscription.status) && !subscription.cancel_at_period_end
}

/**
 * Trials started by our checkout (they set metadata.userId) while the customer already kept an earlier
 * subscription: they came from a second checkout left open, and the contract allows no repeated
 * trial. Decided from the whole list alone (by creation, then id), so deliveries handled in any order,
 * or at once, pick the same ones, and whichever runs first cancels them.
 */
export function repeatedTrials(subscriptions: Stripe.Subscription[]) {
	const earlier = (a: Stripe.Subscription, b: Stripe.Subscription) => a.created < b.created || (a.created === b.created && a.id < b.id)
	return subscriptions.filter(
		(trial) =>
			trial.status === 'trialing' &&
			Boolean(trial.metadata?.userId) &&
			subscriptions.some((other) => other !== trial && isKept(other) && earlier(other, trial)),
	)
}

/** Subscriptions the customer keeps and pays for. */
export function keptSubscriptions(subscriptions: Stripe.Subscription[]) {
	return subscriptions.filter(isKept)
}

/** The subscription to show: the newest live one, else the one this event is about. */
export function subscriptionToShow(subscription: Stripe.Subscription, others: Stripe.Subscription[]) {
	const live = [subscription, ...others].filter((candidate) => isLiveProcessorStatus(candidate.status))
	return live.sort((a, b) => b.created - a.created)[0] ?? subscription
}
