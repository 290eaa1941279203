import { db } from '#app/utils/db.server.ts'
import { ensureUser } from '#app/utils/users.server.ts'
import { FALLBACK_STATE, subscriptionState, type SubscriptionState } from './subscription-state.ts'

/**
 * The signed-in user's subscription state, from our own database only (what the webhook stored).
 * Any internal error (the database down included) answers the fallback payload, logged, so the
 * interface keeps rendering.
 */
export async function billingStatus(clerkId: string): Promise<SubscriptionState> {
	try {
		const user = await db().user.findUnique({
			where: { clerkId },
			select: { stripeCustomerId: true, subscription: { select: { plan: true, processorStatus: true, currentPeriodEnd: true } } },
		})
		if (!user) {
			await ensureUser(clerkId)
			return subscriptionState(null, null)
		}
		return subscriptionState(user.stripeCustomerId, user.subscription)
	} catch (error) {
		console.error(`billing: status for ${clerkId} fell back to free/none: ${(error as Error).message}`)
		return FALLBACK_STATE
	}
}
