import type Stripe from 'stripe'
import { db } from '#app/utils/db.server.ts'
import { createOnceUnder, isGoneAtProcessor } from '#app/utils/stripe.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'

/**
 * The user's processor customer id, created once. The idempotency key derives from the user's uuid,
 * so concurrent first checkouts (a double click) get the same customer from the processor, and the
 * id is stored before anything uses it; a stored id is reused after, until the processor says it does
 * not know it (`replacing`: see isUnknownCustomer).
 *
 * A 5xx, which Stripe would replay under that key for a day, is followed at once by a look for the
 * customer that failed attempt may still have made (Stripe can fail a request after carrying it out),
 * and only without one by an attempt under a key of its own (createOnceUnder): no second customer.
 * Only an empty slot is filled.
 */
export async function ensureCustomer(stripe: Stripe, user: AppUser, { replacing }: { replacing?: string } = {}): Promise<string> {
	if (user.stripeCustomerId && !replacing) return user.stripeCustomerId
	const params = { metadata: { userId: user.id, clerkId: user.clerkId } }
	// A replacement has a key of its own: the first key would give back the customer it replaces.
	const key = replacing ? `customer-for-user-${user.id}-replacing-${replacing}` : `customer-for-user-${user.id}`
	const since = Math.floor(Date.now() / 1000) - MADE_LOOKBACK_SECONDS
	const customer = await createOnceUnder(key, (idempotencyKey) => stripe.customers.create(params, { idempotencyKey }), {
		alreadyMade: () => customerMadeFor(stripe, user.id, since),
	})
	// Only fill an empty slot (or the one being replaced): if another request stored an id first, theirs stands.
	const slot = replacing ? { in: [replacing] } : null
	await db().user.updateMany({ where: { id: user.id, stripeCustomerId: slot }, data: { stripeCustomerId: customer.id } })
	const stored = await db().user.findUniqueOrThrow({ where: { id: user.id }, select: { stripeCustomerId: true } })
	return stored.stripeCustomerId ?? customer.id
}

// How far back the list is read for a failed attempt's customer (the processor's clock may differ
// from ours): one page, newest first.
const MADE_LOOKBACK_SECONDS = 600

/**
 * A customer made for this user by an earlier attempt that failed after carrying out the create.
 * First the newest customers made in the last minutes (the list is strongly consistent: it has the one
 * just made), then a search by `metadata.userId` (consistent after about a minute: it finds one made
 * by an attempt before, whose key Stripe still answers with its 500 for a day). A failure to look is no
 * reason to fail the checkout: null, and a customer is made anew (unused, harmless).
 */
async function customerMadeFor(stripe: Stripe, userId: string, since: number): Promise<Stripe.Customer | null> {
	const ours = (customer: Stripe.Customer) => customer.metadata?.userId === userId
	try {
		const recent = await stripe.customers.list({ created: { gte: since }, limit: 100 })
		const justMade = recent.data.find(ours)
		if (justMade) return justMade
		const searched = await stripe.customers.search({ query: `metadata['userId']:'${userId}'`, limit: 10 })
		return searched.data.find(ours) ?? null
	} catch (error) {
		console.warn(`billing: could not look for a customer made for user ${userId}; making one: ${(error as Error).message}`)
		return null
	}
}

/**
 * The processor does not know this customer: deleted in the Dashboard, or made under the other mode's
 * key (a database used with test keys, then live ones). Reusing the stored id would fail every
 * checkout and portal session of this user for good. Not a live customer asked with a test key: that
 * instance's key is wrong, and the customer is not replaced or forgotten (the request fails, to retry).
 */
export function isUnknownCustomer(error: unknown) {
	return isGoneAtProcessor(error) && (error as { param?: unknown }).param === 'customer'
}

export function noteUnknownCustomer(user: AppUser, customerId: string, then: string) {
	console.warn(
		`billing: customer ${customerId} of user ${user.id} is unknown to the processor (deleted, or made with the other mode's key); ${then}`,
	)
}

/** Clears the stored customer id if it is still this one: the next checkout makes a new customer. */
export async function forgetCustomer(user: AppUser, customerId: string) {
	await db().user.updateMany({ where: { id: user.id, stripeCustomerId: customerId }, data: { stripeCustomerId: null } })
}
