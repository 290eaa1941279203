import { db } from '#app/utils/db.server.ts'
import { ensureUser } from '#app/utils/users.server.ts'
import { trialEligible } from './checkout.server.ts'
import { FALLBACK_STATE, subscriptionState, type SubscriptionState } from './subscription-state.ts'

/**
 * The signed-in user's subscription state, from our own database only (what the webhook stored).
 * Any internal error (the database down included) answers the fallback payload, logged, so the
 * interface keeps rendering.
 */
export async function billingStatus(clerkId: string): Promise<SubscriptionState> {
	return (await billingOverview(clerkId)).state
}

export type BillingOverview = { state: SubscriptionState; trialEligible: boolean; cancelAtPeriodEnd: boolean }

/** The status payload plus what the pricing and account pages also show, in one query. */
export async function billingOverview(clerkId: string): Promise<BillingOverview> {
	try {
		const user = await db().user.findUnique({
			where: { clerkId },
			select: {
				stripeCustomerId: true,
				trialUsed: true,
				subscription: { select: { plan: true, processorStatus: true, currentPeriodEnd: true, cancelAtPeriodEnd: true } },
			},
		})
		if (!user) {
			await ensureUser(clerkId)
			return { state: subscriptionState(null, null), trialEligible: true, cancelAtPeriodEnd: false }
		}
		return {
			state: subscriptionState(user.stripeCustomerId, user.subscription),
			trialEligible: trialEligible(user.trialUsed, Boolean(user.subscription)),
			cancelAtPeriodEnd: user.subscription?.cancelAtPeriodEnd ?? false,
		}
	} catch (error) {
		console.error(`billing: status for ${clerkId} fell back to free/none: ${(error as Error).message}`)
		return { state: FALLBACK_STATE, trialEligible: false, cancelAtPeriodEnd: false }
	}
}
