import crypto from 'node:crypto'
import type Stripe from 'stripe'
import { db } from '#app/utils/db.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'

/** The processor failed on its side (5xx): Stripe keeps that answer under the request's idempotency key. */
const failedAtProcessor = (error: unknown) => ((error as { statusCode?: number }).statusCode ?? 0) >= 500

/**
 * The user's processor customer id, created once. The idempotency key derives from the user's uuid,
 * so concurrent first checkouts (a double click) get the same customer from the processor, and the
 * id is stored before anything uses it; a stored id is reused forever after.
 *
 * Stripe saves a request's result under its key "including 500 errors" and replays it for 24 hours:
 * after one failure on the processor's side, that key answers 500 to every checkout of this user for
 * a day. So a 5xx (first or replayed) is followed at once by one attempt under a key of its own. A
 * customer the failed attempt may still have made stays unused: only an empty slot is filled.
 */
export async function ensureCustomer(stripe: Stripe, user: AppUser): Promise<string> {
	if (user.stripeCustomerId) return user.stripeCustomerId
	const params = { metadata: { userId: user.id, clerkId: user.clerkId } }
	const customer = await stripe.customers.create(params, { idempotencyKey: `customer-for-user-${user.id}` }).catch((error: unknown) => {
		if (!failedAtProcessor(error)) throw error
		return stripe.customers.create(params, { idempotencyKey: `customer-for-user-${user.id}-after-failure-${crypto.randomUUID()}` })
	})
	// Only fill an empty slot: if another request stored an id first, theirs stands.
	await db().user.updateMany({ where: { id: user.id, stripeCustomerId: null }, data: { stripeCustomerId: customer.id } })
	const stored = await db().user.findUniqueOrThrow({ where: { id: user.id }, select: { stripeCustomerId: true } })
	return stored.stripeCustomerId ?? customer.id
}
