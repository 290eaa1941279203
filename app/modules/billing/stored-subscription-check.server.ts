import type Stripe from 'stripe'
import { databaseNow, db } from '#app/utils/db.server.ts'
import { isGoneAtProcessor } from '#app/utils/stripe.server.ts'
import { customerSnapshot, subscriptionToShow } from './customer-subscriptions.server.ts'
import { isOurs } from './processor-subscription.server.ts'
import { storedAsPlan, storeFollowedSubscription, storeSubscription } from './subscription-store.server.ts'
import { isLiveProcessorStatus } from './subscription-state.ts'

/** Drops the user's stored row of this subscription (its row only: the trial stays used); not subscribed. */
async function dropStored(userId: string, id: string, why: string) {
	await db().subscription.deleteMany({ where: { userId, stripeSubscriptionId: id } })
	console.warn(`billing: subscription ${id} of user ${userId} ${why}; its stored state is dropped`)
	return false
}

/**
 * Whether the subscription stored for the user is still live at the processor, asked before an answer
 * that would hold the user to it (checkout's 409, the portal finding no customer). The stored state
 * follows the webhook, so it can outlive the subscription: its last event lost (the endpoint down past
 * the processor's three days of retries), or the subscription gone without one (a database kept when
 * test keys were swapped for live ones, a reset sandbox). Trusted as it stood, that user could never
 * subscribe again and would see a plan they no longer have (decision 0029).
 *
 * The processor's answer is stored as any reading is (a newer one wins). A subscription it does not
 * know is dropped, its row only (the user's trial stays used). When the processor cannot be asked, the
 * stored state stands: refusing a second subscription is the safe side of that doubt.
 */
export async function confirmStoredSubscription(processor: Stripe, userId: string): Promise<boolean> {
	const stored = await db().subscription.findUnique({ where: { userId }, select: { stripeSubscriptionId: true, processorStatus: true } })
	if (!stored) return false
	const id = stored.stripeSubscriptionId
	/** The processor could not be asked: what is stored stands. */
	const storedStands = (error: unknown) => {
		console.warn(`billing: could not confirm subscription ${id} of user ${userId}; its stored state stands: ${(error as Error).message}`)
		return isLiveProcessorStatus(stored.processorStatus)
	}
	const observedAt = await databaseNow()
	let fresh: Stripe.Subscription
	try {
		fresh = await processor.subscriptions.retrieve(id)
	} catch (error) {
		// A live subscription asked for with a test key is not gone: this instance's key is wrong.
		if (!isGoneAtProcessor(error)) return storedStands(error)
		return dropStored(userId, id, "is unknown to the processor (deleted, or of the other mode's key)")
	}
	if (isOurs(fresh)) {
		await storeSubscription(fresh, { observedAt, hintUserId: userId })
		return isLiveProcessorStatus(fresh.status)
	}
	// Stored with one of our plans, its item since moved by an operator to a price our catalogue does not
	// name: still the user's subscription, followed as the webhook follows it. Live, it holds the user
	// to it (a second checkout would bill them twice).
	if ((await storedAsPlan([fresh])).has(fresh.id)) {
		await storeFollowedSubscription(fresh, { observedAt })
		return isLiveProcessorStatus(fresh.status)
	}
	// Another product's subscription, stored (as "free") before such were told apart (0029): what counts
	// is the customer's subscriptions to our plans, read as the webhook reads them. None: the row goes.
	// A processor that cannot list them now (down, 429, 5xx) is one that cannot be asked: the stored
	// state stands, as above. (customerSnapshot throws those for the webhook, to be retried.)
	let ours: Stripe.Subscription[] | null
	try {
		ours = await customerSnapshot(processor, fresh)
	} catch (error) {
		return storedStands(error)
	}
	if (ours === null) return isLiveProcessorStatus(stored.processorStatus)
	if (ours.length === 0) {
		return dropStored(userId, id, "is another product's, and the customer has none of ours")
	}
	const shown = subscriptionToShow(ours)
	await storeSubscription(shown, { observedAt, hintUserId: userId, wholeCustomer: true })
	return isLiveProcessorStatus(shown.status)
}
