import { queryRows } from '#app/utils/db.server.ts'
import { ensureUser, USER_TABLES_SQL } from '#app/utils/users.server.ts'
import type { BilledPrice } from '#app/utils/format-price.ts'
import type { Interval } from './plans.ts'
import { FALLBACK_STATE, subscriptionState, trialEligible, type SubscriptionState } from './subscription-state.ts'

/**
 * The signed-in user's subscription state, from our own database only (what the webhook stored).
 * Any internal error (the database down included) answers the fallback payload, logged, so the
 * interface keeps rendering.
 */
export async function billingStatus(clerkId: string): Promise<SubscriptionState> {
	return (await billingOverview(clerkId)).state
}

export type BillingOverview = {
	state: SubscriptionState
	trialEligible: boolean
	/** When a live subscription set to end ends, or when an ended one ended (ISO); null when it renews or is not known. */
	endsAt: string | null
	/**
	 * Paused by the processor: its trial ended without a payment method. The status says past_due (the
	 * contract's mapping), but no payment failed: the page says what to do instead.
	 */
	paused: boolean
	/** How the subscription is billed (the pricing page marks the plan in that period only); null without one. */
	interval: Interval | null
	/** What the subscription bills each period, when the processor said it is one fixed amount; null otherwise. */
	price: BilledPrice | null
	/** The stored state could not be read: `state` is the contract's free/none fallback, not the truth. */
	unavailable: boolean
}

type OverviewRow = {
	stripeCustomerId: string | null
	trialUsed: boolean
	plan: string | null
	interval: string | null
	processorStatus: string | null
	currentPeriodEnd: Date | null
	cancelAtPeriodEnd: boolean | null
	endsAt: Date | null
	priceAmount: number | null
	priceCurrency: string | null
}

// The user with their subscription, if any: one round trip, prepared once per connection (decision 0011).
const OVERVIEW_BY_CLERK_ID = {
	name: 'billing_overview_by_clerk_id',
	text: `SELECT u."stripeCustomerId", u."trialUsed", s."plan", s."interval", s."processorStatus", s."currentPeriodEnd", s."cancelAtPeriodEnd",
		s."endsAt",
		s."priceAmount", s."priceCurrency"
		FROM ${USER_TABLES_SQL} WHERE u."clerkId" = $1`,
}

/**
 * When the subscription ends or ended. A live one ends only while it is set to end: the flag decides,
 * and endsAt (or, without it, the period's end) says when. During a rolling deploy an instance of the
 * version before endsAt updates the flag without it: a stale endsAt beside a cleared flag (the user
 * resumed) must not say "Ends on", and a row it set to end has only the period's end, the one way
 * that version knew.
 */
function endsAtOf(row: OverviewRow, live: boolean) {
	const endsAt = live ? (row.cancelAtPeriodEnd ? (row.endsAt ?? row.currentPeriodEnd) : null) : row.endsAt
	return endsAt ? endsAt.toISOString() : null
}

/** The status payload plus what the pricing and account pages also show, in one query. */
export async function billingOverview(clerkId: string): Promise<BillingOverview> {
	try {
		const [user] = await queryRows<OverviewRow>(OVERVIEW_BY_CLERK_ID, [clerkId])
		if (!user) {
			await ensureUser(clerkId)
			return {
				state: subscriptionState(null, null),
				trialEligible: true,
				endsAt: null,
				paused: false,
				interval: null,
				price: null,
				unavailable: false,
			}
		}
		const subscription =
			user.processorStatus === null
				? null
				: { plan: user.plan ?? 'free', processorStatus: user.processorStatus, currentPeriodEnd: user.currentPeriodEnd }
		const state = subscriptionState(user.stripeCustomerId, subscription)
		const interval = state.has_subscription ? (user.interval === 'year' ? 'year' : 'month') : null
		return {
			state,
			trialEligible: trialEligible(user.trialUsed, Boolean(subscription)),
			endsAt: endsAtOf(user, state.has_subscription),
			paused: user.processorStatus === 'paused',
			interval,
			// Stored from the processor's subscription (decision 0025); none stored, none shown.
			price:
				interval && user.priceAmount !== null && user.priceCurrency !== null
					? { amount: user.priceAmount, currency: user.priceCurrency }
					: null,
			unavailable: false,
		}
	} catch (error) {
		console.error(`billing: status for ${clerkId} fell back to free/none: ${(error as Error).message}`)
		// The pages say so rather than show a paying customer "Free" and offer them a subscription.
		return { state: FALLBACK_STATE, trialEligible: false, endsAt: null, paused: false, interval: null, price: null, unavailable: true }
	}
}
