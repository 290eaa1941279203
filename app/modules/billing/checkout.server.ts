import { hasPendingDeletionRequest, type UserWithPendingDeletion } from '#app/modules/account-deletion/deletion.server.ts'
import { checkoutLimiter } from '#app/utils/abuse-limits.server.ts'
import { env } from '#app/utils/env.server.ts'
import { stripe, withoutCallSiteTrace } from '#app/utils/stripe.server.ts'
import type { CheckoutRequest } from '#app/utils/validation/billing.ts'
import { ensureCustomer, isUnknownCustomer, noteUnknownCustomer } from './customer.server.ts'
import { PLAN_TABLE } from './plans.ts'
import { currentPriceIdFor, isRefusedPrice, PriceNotFoundError, priceIdFor } from './prices.server.ts'
import { confirmStoredSubscription } from './stored-subscription-check.server.ts'
import { isLiveProcessorStatus, trialEligible } from './subscription-state.ts'

export type CheckoutResult =
	| { status: 'ok'; url: string }
	| { status: 'error'; code: 'processor_not_configured' | 'already-subscribed' | 'deletion-pending' | 'server-error' }
	| { status: 'error'; code: 'rate-limited'; retryAfterSeconds: number }

/**
 * Starts a hosted checkout for the signed-in user (contract.md "Checkout session"). `account` is the
 * user read with their pending deletion request (`userWithPendingDeletion`).
 */
export async function startCheckout(account: UserWithPendingDeletion, { plan, interval }: CheckoutRequest): Promise<CheckoutResult> {
	const { user } = account
	const processor = stripe()
	if (!processor) return { status: 'error', code: 'processor_not_configured' }
	const limit = await checkoutLimiter.consume(user.id)
	if (!limit.allowed) return { status: 'error', code: 'rate-limited', retryAfterSeconds: limit.retryAfterSeconds }

	const current = user.subscriptionStatus
	const trialDays = trialEligible(user.trialUsed, current !== null) ? PLAN_TABLE[plan].trialDays : 0
	const appUrl = env().APP_URL
	try {
		// Read with the user row (users.server.ts). Plan changes go through the customer portal, never
		// through a second subscription. A refusal is confirmed with the processor first: the stored state
		// can outlive the subscription (decision 0029). Only for a user stored as subscribed: no other
		// checkout makes the call. When the processor cannot be asked the stored state stands (409); when
		// our database fails, that is a 500 to retry like any other, not a refusal.
		if (current !== null && isLiveProcessorStatus(current) && (await confirmStoredSubscription(processor, user.id))) {
			return { status: 'error', code: 'already-subscribed' }
		}
		// The user asked for the account to be deleted: a new subscription would bill an account that
		// is on its way out, and would hold up the deletion (docs/decisions/0020).
		if (await hasPendingDeletionRequest(account)) return { status: 'error', code: 'deletion-pending' }
		// The price first: without a synced catalogue nothing is made at the processor, not even the customer.
		const price = await priceIdFor(processor, plan, interval)
		const customer = await ensureCustomer(processor, user)
		const open = (customer: string, price: string) =>
			withoutCallSiteTrace(() =>
				processor.checkout.sessions.create({
					mode: 'subscription',
					customer,
					line_items: [{ price, quantity: 1 }],
					client_reference_id: user.id,
					metadata: { userId: user.id },
					subscription_data: { metadata: { userId: user.id }, ...(trialDays > 0 ? { trial_period_days: trialDays } : {}) },
					success_url: `${appUrl}/account?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
					cancel_url: `${appUrl}/pricing?checkout=canceled`,
				}),
			)
		const session = await open(customer, price).catch(async (error: unknown) => {
			// A price cached before an operator's sync archived it: the catalogue has moved on, so look
			// again rather than fail every checkout of the plan until the cache expires.
			if (isRefusedPrice(error)) {
				const current = await currentPriceIdFor(processor, plan, interval)
				if (current === price) throw error
				console.log(
					`billing: price ${price} of ${plan}/${interval} was refused by the processor; checkout uses ${current}, its current one`,
				)
				return open(customer, current)
			}
			if (!isUnknownCustomer(error)) throw error
			noteUnknownCustomer(user, customer, 'a new one replaces it')
			return open(await ensureCustomer(processor, user, { replacing: customer }), price)
		})
		if (!session.url) throw new Error(`checkout session ${session.id} has no url`)
		return { status: 'ok', url: session.url }
	} catch (error) {
		// Our failure, not the user's: the retry we invite must not be held against them (as contact).
		await limit.refund()
		// No price for the plan: the catalogue was never synced. A retry cannot succeed until an operator
		// runs `npm run billing:sync`, so this is "billing is not enabled", not "try again".
		if (error instanceof PriceNotFoundError) {
			console.error(`billing: checkout is not available: ${error.message}`)
			return { status: 'error', code: 'processor_not_configured' }
		}
		console.error(`billing: checkout for user ${user.id} failed: ${(error as Error).message}`)
		return { status: 'error', code: 'server-error' }
	}
}
