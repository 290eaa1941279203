import type Stripe from 'stripe'
import { db } from '#app/utils/db.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'

/**
 * The user's processor customer id, created once. The idempotency key derives from the user's uuid,
 * so concurrent first checkouts (a double click) get the same customer from the processor, and the
 * id is stored before anything uses it; a stored id is reused forever after.
 */
export async function ensureCustomer(stripe: Stripe, user: AppUser): Promise<string> {
	if (user.stripeCustomerId) return user.stripeCustomerId
	const customer = await stripe.customers.create(
		{ metadata: { userId: user.id, clerkId: user.clerkId } },
		{ idempotencyKey: `customer-for-user-${user.id}` },
	)
	// Only fill an empty slot: if another request stored an id first, theirs stands.
	await db().user.updateMany({ where: { id: user.id, stripeCustomerId: null }, data: { stripeCustomerId: customer.id } })
	const stored = await db().user.findUniqueOrThrow({ where: { id: user.id }, select: { stripeCustomerId: true } })
	return stored.stripeCustomerId ?? customer.id
}
