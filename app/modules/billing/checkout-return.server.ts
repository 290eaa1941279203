import { checkoutReturnLimiter } from '#app/utils/abuse-limits.server.ts'
import { databaseNow } from '#app/utils/db.server.ts'
import { stripe } from '#app/utils/stripe.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'
import { checkoutOpenedFor } from './checkout-opened-for.ts'
import { storeSubscription } from './subscription-store.server.ts'

/**
 * The return from hosted checkout (/account?checkout=success&session_id=…): store the subscription at
 * once, so the account page is right before the webhook arrives. The webhook stays the source of
 * truth; both paths write through storeSubscription, which keeps only the newest state.
 */
export async function settleCheckoutReturn(user: AppUser, sessionId: string): Promise<boolean> {
	const processor = stripe()
	if (!processor || !/^cs_[A-Za-z0-9_]+$/.test(sessionId)) return false
	// Reloading the address (or a script) must not spend the processor's API quota: past the limit the
	// page shows what is stored, and the webhook settles the checkout as it always does.
	if (!(await checkoutReturnLimiter.consume(user.id).catch(() => ({ allowed: false }))).allowed) return false
	try {
		// Stamped before reading, as the webhook does (decision 0013): a slow read never outranks a later one.
		const observedAt = await databaseNow()
		const session = await processor.checkout.sessions.retrieve(sessionId, { expand: ['subscription'] })
		// Only a checkout we opened for this user may settle it (a link to another one's session must not).
		if (checkoutOpenedFor(session) !== user.id || !session.subscription || typeof session.subscription === 'string') return false
		await storeSubscription(session.subscription, { observedAt, hintUserId: user.id })
		return true
	} catch (error) {
		console.error(`billing: settling checkout ${sessionId} failed (the webhook will): ${(error as Error).message}`)
		return false
	}
}
