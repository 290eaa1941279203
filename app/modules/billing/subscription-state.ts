import { PLAN_TABLE, type Plan } from './plans.ts'

// contract.md "Status mapping": the processor's statuses onto the interface's five, and the payload
// of GET /api/billing/status. Client-safe: the account page formats the same state.

export type SubscriptionStatus = 'active' | 'trialing' | 'past_due' | 'canceled' | 'none'

export type SubscriptionState = {
	plan: Plan
	status: SubscriptionStatus
	credits_daily: number
	current_period_end: string | null
	processor_customer_id: string | null
	has_subscription: boolean
}

const STATUS_MAP: Record<string, SubscriptionStatus> = {
	active: 'active',
	trialing: 'trialing',
	past_due: 'past_due',
	unpaid: 'past_due',
	paused: 'past_due',
	canceled: 'canceled',
	incomplete: 'none',
	incomplete_expired: 'none',
}

export function mapProcessorStatus(processorStatus: string): SubscriptionStatus {
	return STATUS_MAP[processorStatus] ?? 'none'
}

export function hasSubscription(status: SubscriptionStatus) {
	return status === 'active' || status === 'trialing' || status === 'past_due'
}

/** The processor's statuses of a subscription the user still has (and may still be billed for). */
export const LIVE_PROCESSOR_STATUSES = Object.keys(STATUS_MAP).filter((status) => hasSubscription(mapProcessorStatus(status)))

export function isLiveProcessorStatus(processorStatus: string) {
	return hasSubscription(mapProcessorStatus(processorStatus))
}

/** A user who never had a subscription record (their customer id, if any, is added). */
const FREE_STATE: SubscriptionState = {
	plan: 'free',
	status: 'none',
	credits_daily: PLAN_TABLE.free.creditsDaily,
	current_period_end: null,
	processor_customer_id: null,
	has_subscription: false,
}

/**
 * What the status endpoint answers on any internal error, so the interface keeps rendering. The
 * contract makes it a free user's state; a name of its own so that neither is changed for the other.
 */
export const FALLBACK_STATE: SubscriptionState = { ...FREE_STATE }

/** contract.md: a trial only for a user who has never had a subscription or a trial. */
export function trialEligible(trialUsed: boolean, hasSubscriptionRecord: boolean) {
	return !trialUsed && !hasSubscriptionRecord
}

type StoredSubscription = { plan: string; processorStatus: string; currentPeriodEnd: Date | null }

export function subscriptionState(customerId: string | null, stored: StoredSubscription | null): SubscriptionState {
	if (!stored) return { ...FREE_STATE, processor_customer_id: customerId }
	const status = mapProcessorStatus(stored.processorStatus)
	const subscribed = hasSubscription(status)
	const plan: Plan = subscribed && stored.plan in PLAN_TABLE ? (stored.plan as Plan) : 'free'
	return {
		plan,
		status,
		credits_daily: PLAN_TABLE[plan].creditsDaily,
		current_period_end: stored.currentPeriodEnd ? stored.currentPeriodEnd.toISOString() : null,
		processor_customer_id: customerId,
		has_subscription: subscribed,
	}
}
