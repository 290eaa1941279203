import type Stripe from 'stripe'
import { Prisma } from '#app/generated/prisma/client.ts'
import { db } from '#app/utils/db.server.ts'
import { parseLookupKey } from './plans.ts'
import { isLiveProcessorStatus, LIVE_PROCESSOR_STATUSES } from './subscription-state.ts'

type Tx = Prisma.TransactionClient

/** `repeated-trial`: not stored; the caller ends it at the processor (docs/decisions/0013). */
export type StoreOutcome = 'stored' | 'stale' | 'unknown-user' | 'repeated-trial'

export function customerIdOf(subscription: Stripe.Subscription) {
	return typeof subscription.customer === 'string' ? subscription.customer : subscription.customer.id
}

/** In this API version the period end lives on each item: take the latest. */
function latestPeriodEnd(subscription: Stripe.Subscription): Date | null {
	const ends = subscription.items.data.map((item) => item.current_period_end).filter((end): end is number => typeof end === 'number')
	return ends.length ? new Date(Math.max(...ends) * 1000) : null
}

async function findUserId(tx: Tx, subscription: Stripe.Subscription, hintUserId?: string | null) {
	const candidates = [subscription.metadata?.userId, hintUserId].filter(
		(id): id is string => typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id),
	)
	for (const id of candidates) {
		const user = await tx.user.findUnique({ where: { id }, select: { id: true } })
		if (user) return user.id
	}
	const byCustomer = await tx.user.findUnique({ where: { stripeCustomerId: customerIdOf(subscription) }, select: { id: true } })
	return byCustomer?.id ?? null
}

/**
 * Stores the processor's subscription as the user's current one. Order is not trusted: `observedAt`
 * is when we read this state from the processor, and a write lands only if it is newer than what is
 * stored for the same subscription. A customer can hold two subscriptions at once (two checkouts
 * completed in two tabs), so between different ones a live subscription outranks one that has ended,
 * and otherwise the one created later wins (docs/decisions/0013).
 */
export async function storeSubscription(
	subscription: Stripe.Subscription,
	{ observedAt, hintUserId, tx = db() }: { observedAt: Date; hintUserId?: string | null; tx?: Tx },
): Promise<StoreOutcome> {
	const userId = await findUserId(tx, subscription, hintUserId)
	if (!userId) return 'unknown-user'
	const price = subscription.items.data[0]?.price
	const parsed = parseLookupKey(price?.lookup_key)
	const data = {
		stripeSubscriptionId: subscription.id,
		plan: parsed?.plan ?? 'free',
		interval: parsed?.interval ?? price?.recurring?.interval ?? 'month',
		processorStatus: subscription.status,
		currentPeriodEnd: latestPeriodEnd(subscription),
		cancelAtPeriodEnd: subscription.cancel_at_period_end,
		processorCreatedAt: new Date(subscription.created * 1000),
		sourceUpdatedAt: observedAt,
	}
	// Having had any subscription (or trial) ends trial eligibility; the customer id is filled if empty.
	// In a transaction this update also locks the user row, so deliveries for one user run one by one
	// and the check below sees what the other stored.
	await tx.user.update({ where: { id: userId }, data: { trialUsed: true } })
	await tx.user.updateMany({ where: { id: userId, stripeCustomerId: null }, data: { stripeCustomerId: customerIdOf(subscription) } })

	const current = await tx.subscription.findUnique({ where: { userId }, select: { stripeSubscriptionId: true, processorStatus: true } })
	const otherLive =
		current && current.stripeSubscriptionId !== subscription.id && isLiveProcessorStatus(current.processorStatus) ? current : null
	if (otherLive && isLiveProcessorStatus(subscription.status)) {
		// A trial started by our checkout (it sets metadata.userId) while another subscription is live
		// came from a second checkout left open: the contract allows no repeated trial.
		if (subscription.status === 'trialing' && subscription.metadata?.userId) return 'repeated-trial'
		console.warn(
			`billing: user ${userId} has two live subscriptions at the processor (${otherLive.stripeSubscriptionId}, ${subscription.id}); ` +
				'the status follows the newer: cancel and refund the other in the processor dashboard',
		)
	}

	const created = { lt: data.processorCreatedAt }
	const outranksOther = isLiveProcessorStatus(subscription.status)
		? { OR: [{ processorStatus: { notIn: LIVE_PROCESSOR_STATUSES } }, { processorCreatedAt: created }] }
		: { processorStatus: { notIn: LIVE_PROCESSOR_STATUSES }, processorCreatedAt: created }
	for (let attempt = 0; attempt < 2; attempt++) {
		const updated = await tx.subscription.updateMany({
			where: {
				userId,
				OR: [
					{ stripeSubscriptionId: subscription.id, sourceUpdatedAt: { lt: observedAt } },
					{ stripeSubscriptionId: { not: subscription.id }, ...outranksOther },
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
			// Created concurrently by another delivery: compare against theirs on the next pass.
			if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') || tx !== db()) throw error
		}
	}
	return 'stale'
}
