import type Stripe from 'stripe'
import { Prisma } from '#app/generated/prisma/client.ts'
import { db } from '#app/utils/db.server.ts'
import { env } from '#app/utils/env.server.ts'
import { stripe } from '#app/utils/stripe.server.ts'
import { isLiveProcessorStatus } from './subscription-state.ts'
import { customerIdOf, storeSubscription, type StoreOutcome } from './subscription-store.server.ts'

export type WebhookResult =
	| { status: 'ok'; outcome: StoreOutcome | 'duplicate' | 'ignored' }
	| { status: 'error'; code: 'processor_not_configured' | 'bad-signature' | 'server-error' }

/** The subscription an event is about, and the user it names, for the kinds we handle. */
function subscriptionOf(event: Stripe.Event): { subscriptionId: string; userId?: string | null } | null {
	const idOf = (value: string | { id: string } | null | undefined) => (typeof value === 'string' ? value : value?.id)
	switch (event.type) {
		case 'checkout.session.completed': {
			const id = idOf(event.data.object.subscription)
			return id ? { subscriptionId: id, userId: event.data.object.client_reference_id } : null
		}
		case 'customer.subscription.created':
		case 'customer.subscription.updated':
		case 'customer.subscription.deleted':
			return { subscriptionId: event.data.object.id }
		case 'invoice.paid':
		case 'invoice.payment_failed': {
			const id = idOf(event.data.object.parent?.subscription_details?.subscription)
			return id ? { subscriptionId: id } : null
		}
		default:
			return null
	}
}

/**
 * When a subscription has ended, another one of the same customer may still be live (a second
 * checkout completed in another tab): the newest such one, for the status to follow.
 */
async function liveSiblingOf(processor: Stripe, subscription: Stripe.Subscription) {
	if (isLiveProcessorStatus(subscription.status)) return null
	// The default list leaves out canceled subscriptions; a customer holds a handful at most.
	const { data } = await processor.subscriptions.list({ customer: customerIdOf(subscription), limit: 100 })
	const live = data.filter((other) => other.id !== subscription.id && isLiveProcessorStatus(other.status))
	return live.sort((a, b) => b.created - a.created)[0] ?? null
}

/**
 * Verifies and applies one webhook delivery. Each event id takes effect once: the ledger row and the
 * effect commit in one transaction. The effect never trusts the event's copy or its order: the
 * subscription is read fresh from the processor, and storeSubscription keeps only newer state.
 */
export async function handleBillingWebhook(rawBody: string, signature: string | null): Promise<WebhookResult> {
	const secret = env().STRIPE_WEBHOOK_SECRET
	const processor = stripe()
	if (!secret || !processor) return { status: 'error', code: 'processor_not_configured' }

	let event: Stripe.Event
	try {
		event = processor.webhooks.constructEvent(rawBody, signature ?? '', secret)
	} catch {
		return { status: 'error', code: 'bad-signature' }
	}

	try {
		if (await db().webhookEvent.findUnique({ where: { id: event.id }, select: { id: true } })) {
			return { status: 'ok', outcome: 'duplicate' }
		}
		const target = subscriptionOf(event)
		// Stripe retries non-2xx for days: record kinds we ignore and answer 200.
		const subscription = target ? await processor.subscriptions.retrieve(target.subscriptionId) : null
		const sibling = subscription ? await liveSiblingOf(processor, subscription) : null
		const observedAt = new Date()

		const outcome = await db().$transaction(async (tx) => {
			await tx.webhookEvent.create({ data: { id: event.id, type: event.type } })
			if (!subscription) return 'ignored' as const
			const stored = await storeSubscription(subscription, { observedAt, hintUserId: target?.userId, tx })
			if (stored === 'repeated-trial') {
				// Inside the transaction: if ending it fails, the event is not recorded and the retry tries again.
				await processor.subscriptions.cancel(subscription.id)
				console.warn(`billing: ended ${subscription.id}, a second trial for a customer with a live subscription`)
			}
			if (sibling) await storeSubscription(sibling, { observedAt, hintUserId: target?.userId, tx })
			return stored
		})
		if (outcome === 'unknown-user') {
			console.warn(`billing: webhook ${event.id} (${event.type}) names no known user; recorded and ignored`)
		}
		return { status: 'ok', outcome }
	} catch (error) {
		// A concurrent delivery of the same event committed first.
		if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
			const recorded = await db()
				.webhookEvent.findUnique({ where: { id: event.id }, select: { id: true } })
				.catch(() => null)
			if (recorded) return { status: 'ok', outcome: 'duplicate' }
		}
		console.error(`billing: webhook ${event.id} (${event.type}) failed; the processor will retry: ${(error as Error).message}`)
		return { status: 'error', code: 'server-error' }
	}
}
