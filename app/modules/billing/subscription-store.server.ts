import type Stripe from 'stripe'
import { Prisma } from '#app/generated/prisma/client.ts'
import { db } from '#app/utils/db.server.ts'
import { planOfPrice } from './plans.ts'
import { looksLikeUuid } from '#app/utils/uuid.ts'
import { customerIdOf, endDateOf, isSetToEnd, latestPeriodEnd, planItemOf } from './processor-subscription.server.ts'
import { isLiveProcessorStatus, LIVE_PROCESSOR_STATUSES } from './subscription-state.ts'

type Tx = Prisma.TransactionClient

export type StoreOutcome = 'stored' | 'stale' | 'unknown-user'

const NOT_A_FIXED_AMOUNT = { priceAmount: null, priceCurrency: null }

/**
 * What the subscription bills each period, as the processor says (decision 0025), when that is one
 * fixed amount in the period we store (`interval`): one item, a per-unit price charged every month
 * or every year, in the subscription's currency. Nothing otherwise (several items, package or
 * tiered or metered pricing, a price with other currencies, a three-month period: none of which our
 * sync makes), rather than an amount that is not what is charged.
 */
function billedAmount(subscription: Stripe.Subscription, interval: string): { priceAmount: number | null; priceCurrency: string | null } {
	if (subscription.items.data.length !== 1) return NOT_A_FIXED_AMOUNT
	const { price, quantity } = subscription.items.data[0]!
	const recurring = price.recurring
	if (
		typeof price.unit_amount !== 'number' ||
		price.transform_quantity ||
		!recurring ||
		recurring.usage_type === 'metered' ||
		(interval !== 'month' && interval !== 'year') ||
		recurring.interval !== interval ||
		recurring.interval_count !== 1 ||
		price.currency !== subscription.currency ||
		!/^[a-z]{3}$/.test(price.currency)
	) {
		return NOT_A_FIXED_AMOUNT
	}
	const amount = price.unit_amount * (quantity ?? 1)
	if (!Number.isSafeInteger(amount) || amount < 0 || amount > 2_147_483_647) return NOT_A_FIXED_AMOUNT
	return { priceAmount: amount, priceCurrency: price.currency }
}

/** Where the subscription stands at the processor, as read at `observedAt`: every column but its plan. */
function stateOf(subscription: Stripe.Subscription, interval: string, observedAt: Date) {
	return {
		processorStatus: subscription.status,
		currentPeriodEnd: latestPeriodEnd(subscription),
		// Set to end by either field (the column keeps its first name, which instances of the version
		// before read during a rolling deploy); endsAt says when.
		cancelAtPeriodEnd: isSetToEnd(subscription),
		endsAt: endDateOf(subscription),
		...billedAmount(subscription, interval),
		sourceUpdatedAt: observedAt,
	}
}

/**
 * A subscription stored for a user whose items no longer bill one of our plans: an operator moved it
 * to a price our catalogue does not name (a custom price made in the Dashboard, or another product's).
 * It is still the one the user's status shows, so it is still followed: its status and dates are
 * stored as the processor says (its cancellation ends the plan), and its plan stays the last of ours it
 * billed. Only the row of this subscription, and only with a newer reading. 'stale' when there is none.
 */
export async function storeFollowedSubscription(
	subscription: Stripe.Subscription,
	{ observedAt, tx = db() }: { observedAt: Date; tx?: Tx },
) {
	const stored = await tx.subscription.findUnique({ where: { stripeSubscriptionId: subscription.id }, select: { interval: true } })
	if (!stored) return 'stale' as const
	const updated = await tx.subscription.updateMany({
		where: { stripeSubscriptionId: subscription.id, sourceUpdatedAt: { lt: observedAt } },
		data: stateOf(subscription, stored.interval, observedAt),
	})
	return updated.count > 0 ? ('stored' as const) : ('stale' as const)
}

/**
 * Of these subscriptions, the ids stored as a user's paid plan: followed whatever their price now says.
 * (A row of another product's subscription, stored before the two were told apart, holds "free".)
 */
export async function storedAsPlan(subscriptions: Stripe.Subscription[]): Promise<Set<string>> {
	const rows = await db().subscription.findMany({
		where: { stripeSubscriptionId: { in: subscriptions.map((subscription) => subscription.id) }, plan: { not: 'free' } },
		select: { stripeSubscriptionId: true },
	})
	return new Set(rows.map((row) => row.stripeSubscriptionId))
}

async function findUserId(tx: Tx, subscription: Stripe.Subscription, hintUserId?: string | null) {
	const candidates = [subscription.metadata?.userId, hintUserId].filter(looksLikeUuid)
	for (const id of candidates) {
		const user = await tx.user.findUnique({ where: { id }, select: { id: true } })
		if (user) return user.id
	}
	const byCustomer = await tx.user.findUnique({ where: { stripeCustomerId: customerIdOf(subscription) }, select: { id: true } })
	return byCustomer?.id ?? null
}

/** Our user holding this processor customer, if any. */
export async function userIdForCustomer(customerId: string) {
	const user = await db().user.findUnique({ where: { stripeCustomerId: customerId }, select: { id: true } })
	return user?.id ?? null
}

/**
 * Stores the processor's subscription as the user's current one. Order is not trusted: `observedAt`
 * is when we read this state from the processor, and a write lands only if it is newer than what is
 * stored. `wholeCustomer`: the caller listed all of the customer's subscriptions at `observedAt` and
 * this is the one to show, so the newest such reading wins. Otherwise it is one subscription read on
 * its own: it replaces a different one only if that one has ended, and it is live or was created
 * later (docs/decisions/0013).
 */
export async function storeSubscription(
	subscription: Stripe.Subscription,
	{
		observedAt,
		hintUserId,
		wholeCustomer = false,
		tx = db(),
	}: { observedAt: Date; hintUserId?: string | null; wholeCustomer?: boolean; tx?: Tx },
): Promise<StoreOutcome> {
	const userId = await findUserId(tx, subscription, hintUserId)
	if (!userId) return 'unknown-user'
	const price = (planItemOf(subscription) ?? subscription.items.data[0])?.price
	const parsed = planOfPrice(price)
	const interval = parsed?.interval ?? price?.recurring?.interval ?? 'month'
	const data = {
		stripeSubscriptionId: subscription.id,
		plan: parsed?.plan ?? 'free',
		interval,
		...stateOf(subscription, interval, observedAt),
		processorCreatedAt: new Date(subscription.created * 1000),
	}
	// Having had any subscription (or trial) ends trial eligibility; the customer id is filled if empty.
	const holder = await tx.user.update({ where: { id: userId }, data: { trialUsed: true }, select: { stripeCustomerId: true } })
	await tx.user.updateMany({ where: { id: userId, stripeCustomerId: null }, data: { stripeCustomerId: customerIdOf(subscription) } })
	// A reading of the whole customer speaks for the user only while the customer is theirs. A late
	// event about a customer they no longer hold (deleted at the processor, and replaced by checkout)
	// is one subscription read on its own: it must not replace the live one of their new customer.
	const ofTheirCustomer = (holder.stripeCustomerId ?? customerIdOf(subscription)) === customerIdOf(subscription)

	const newer = { sourceUpdatedAt: { lt: observedAt } }
	const replacesOther =
		wholeCustomer && ofTheirCustomer
			? newer
			: {
					...newer,
					processorStatus: { notIn: LIVE_PROCESSOR_STATUSES },
					...(isLiveProcessorStatus(subscription.status) ? {} : { processorCreatedAt: { lt: data.processorCreatedAt } }),
				}
	for (let attempt = 0; attempt < 2; attempt++) {
		const updated = await tx.subscription.updateMany({
			where: {
				userId,
				OR: [
					{ stripeSubscriptionId: subscription.id, ...newer },
					{ stripeSubscriptionId: { not: subscription.id }, ...replacesOther },
				],
			},
			data,
		})
		if (updated.count > 0) return 'stored'
		const existing = await tx.subscription.findUnique({ where: { userId }, select: { id: true } })
		if (existing) return 'stale'
		try {
			await tx.subscription.create({ data: { ...data, userId } })
			return 'stored'
		} catch (error) {
			// Created concurrently (by the checkout return, or another delivery): outside a transaction,
			// compare against theirs on the next pass. Inside one, PostgreSQL has aborted it: rethrown, so the
			// webhook answers 500 and its retry compares. (In the webhook, the user row's update above
			// already makes a second delivery for the same user wait for the first.)
			if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') || tx !== db()) throw error
		}
	}
	return 'stale'
}
