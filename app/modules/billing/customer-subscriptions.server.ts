import type Stripe from 'stripe'
import { customerIdOf, isOurs, isSetToEnd } from './processor-subscription.server.ts'
import { isLiveProcessorStatus } from './subscription-state.ts'

// docs/decisions/0013: a customer can hold several subscriptions at once (two checkouts left open in
// two tabs and both paid). Which one the user sees, and whether a new trial is a repeated one, is
// decided from the processor's own list, read fresh: never from what we stored, which may be behind.

/** Failures worth a retry by the processor; anything else means the list cannot be read here. */
function isTransient(error: unknown) {
	const { type, statusCode } = error as { type?: string; statusCode?: number }
	return type === 'StripeConnectionError' || type === 'StripeRateLimitError' || (typeof statusCode === 'number' && statusCode >= 500)
}

/**
 * All of the customer's subscriptions to our plans in one reading, the event's own first (the listed
 * copy, which is newer than the one read before), or null when the list cannot be read as one (a 4xx,
 * or a body without `data`): the caller then decides from the one subscription it read. Another
 * product's subscriptions on the same customer are left out: they neither show as the plan nor make a
 * trial of ours a repeated one. A connection failure, 429 or 5xx throws, so the webhook answers 500
 * and is retried.
 */
export async function customerSnapshot(
	processor: Stripe,
	subscription: Stripe.Subscription,
	/** Of the subscriptions not ours by their price, the ids still followed as a user's plan (decision 0029). */
	followedAmong: (notOurs: Stripe.Subscription[]) => Promise<Set<string>> = async () => new Set(),
): Promise<Stripe.Subscription[] | null> {
	let listed: Stripe.Subscription[]
	try {
		// `all` includes cancelled ones, so the event's subscription is in the same reading as the rest.
		const page = await processor.subscriptions.list({ customer: customerIdOf(subscription), status: 'all', limit: 100 })
		if (!Array.isArray(page?.data)) throw new Error('the answer has no data')
		listed = page.data
	} catch (error) {
		if (isTransient(error)) throw error
		console.warn(
			`billing: could not list the subscriptions of ${customerIdOf(subscription)}; deciding from ${subscription.id} alone: ${(error as Error).message}`,
		)
		return null
	}
	const own = listed.find((candidate) => candidate.id === subscription.id) ?? subscription
	const all = [own, ...listed.filter((candidate) => candidate.id !== subscription.id)]
	const notOurs = all.filter((candidate) => !isOurs(candidate))
	const followed = notOurs.length > 0 ? await followedAmong(notOurs) : new Set<string>()
	return all.filter((candidate) => isOurs(candidate) || followed.has(candidate.id))
}

/** Live, and not set to end: a subscription the customer means to keep. */
function isKept(subscription: Stripe.Subscription) {
	return isLiveProcessorStatus(subscription.status) && !isSetToEnd(subscription)
}

const earlier = (a: Stripe.Subscription, b: Stripe.Subscription) => a.created < b.created || (a.created === b.created && a.id < b.id)

/** The subscriptions kept from before `trial`: what makes it a repeated one. */
const keptBefore = (trial: Stripe.Subscription, subscriptions: Stripe.Subscription[]) =>
	subscriptions.filter((other) => other.id !== trial.id && isKept(other) && earlier(other, trial))

/**
 * Trials our checkout started for this user (metadata.userId is theirs, the price one of our plans)
 * while they already kept an earlier subscription: they came from a second checkout left open, and the
 * contract allows no repeated trial. Decided from the whole list alone (by creation, then id), so
 * deliveries handled in any order, or at once, pick the same ones. Another product's subscriptions on
 * the same processor account are never touched.
 */
export function repeatedTrials(subscriptions: Stripe.Subscription[], userId: string | null) {
	return subscriptions.filter((trial) => isOurTrial(trial, userId) && keptBefore(trial, subscriptions).length > 0)
}

/** A trial our checkout started for this user: metadata.userId is theirs, the price one of our plans. */
const isOurTrial = (trial: Stripe.Subscription, userId: string | null): boolean =>
	userId !== null && trial.status === 'trialing' && trial.metadata?.userId === userId && isOurs(trial)

/**
 * Trials our checkout started for this user after an earlier subscription of theirs had a trial, with
 * none kept from before (those are repeatedTrials): a checkout opened before the first trial existed,
 * paid after that trial was cancelled or set to end. The user means to subscribe and paid for it, so
 * the subscription stays; the trial does not (decision 0013, "a second trial from an older checkout").
 */
export function lateTrials(subscriptions: Stripe.Subscription[], userId: string | null) {
	return subscriptions.filter(
		(trial) =>
			isOurTrial(trial, userId) &&
			keptBefore(trial, subscriptions).length === 0 &&
			subscriptions.some(
				(other) => other.id !== trial.id && other.metadata?.userId === userId && other.trial_start !== null && earlier(other, trial),
			),
	)
}

/** Ends a repeated trial. Two deliveries may both try: Stripe answers 404 to the second. */
async function cancelTrial(processor: Stripe, subscriptionId: string) {
	try {
		return await processor.subscriptions.cancel(subscriptionId)
	} catch (error) {
		if ((error as { code?: string }).code !== 'resource_missing') throw error
		return processor.subscriptions.retrieve(subscriptionId)
	}
}

const withCopies = (subscriptions: Stripe.Subscription[], copies: Stripe.Subscription[]) =>
	subscriptions.map((candidate) => copies.find((copy) => copy.id === candidate.id) ?? candidate)

/**
 * Cancels the repeated trials among `subscriptions` and returns the list as it then stands. The user
 * may have set the subscription they keep to end since the list was read: its fresh copy decides, just
 * before cancelling (Stripe has no conditional cancel, so one round trip of that window remains).
 */
export async function endRepeatedTrials(processor: Stripe, subscriptions: Stripe.Subscription[], userId: string | null) {
	let current = subscriptions
	for (const trial of repeatedTrials(subscriptions, userId)) {
		const reasons = keptBefore(trial, current)
		const fresh = await Promise.all(reasons.map((reason) => processor.subscriptions.retrieve(reason.id)))
		current = withCopies(current, fresh)
		if (!fresh.some(isKept)) continue
		current = withCopies(current, [await cancelTrial(processor, trial.id)])
		console.warn(`billing: cancelled ${trial.id}, a second trial for user ${userId} who keeps ${fresh.find(isKept)!.id}`)
	}
	for (const trial of lateTrials(current, userId)) {
		// Read again: another delivery may have ended it already; only a trial still running is ended.
		const fresh = await processor.subscriptions.retrieve(trial.id)
		const billed = fresh.status === 'trialing' ? await processor.subscriptions.update(trial.id, { trial_end: 'now' }) : fresh
		current = withCopies(current, [billed])
		console.warn(`billing: ended the trial of ${trial.id} at once: user ${userId} already had a trial`)
	}
	return current
}

/** Subscriptions the customer keeps and pays for. */
export function keptSubscriptions(subscriptions: Stripe.Subscription[]) {
	return subscriptions.filter(isKept)
}

/**
 * The one to show: live before ended, kept before set to end, then the newest (by creation, then id,
 * so the choice does not flip between events). With nothing live, the newest of those that ended.
 */
export function subscriptionToShow(subscriptions: Stripe.Subscription[]) {
	const score = (candidate: Stripe.Subscription) => Number(isLiveProcessorStatus(candidate.status)) * 2 + Number(isKept(candidate))
	return [...subscriptions].sort((a, b) => score(b) - score(a) || (earlier(a, b) ? 1 : -1))[0]!
}
