import type Stripe from 'stripe'
import { Prisma } from '#app/generated/prisma/client.ts'
import { databaseNow, db } from '#app/utils/db.server.ts'
import { env } from '#app/utils/env.server.ts'
import { noteOncePerMinute } from '#app/utils/log-note.server.ts'
import { hasValidWebhookSignature, secretKeyMode, stripe } from '#app/utils/stripe.server.ts'
import { customerSnapshot, endRepeatedTrials, keptSubscriptions, subscriptionToShow } from './customer-subscriptions.server.ts'
import { parseWebhookEvent, type ParsedEvent } from './webhook-event.server.ts'
import { customerIdOf, isOurs } from './processor-subscription.server.ts'
import {
	storedAsPlan,
	storeFollowedSubscription,
	storeSubscription,
	userIdForCustomer,
	type StoreOutcome,
} from './subscription-store.server.ts'

export type WebhookResult =
	| { status: 'ok'; outcome: StoreOutcome | 'duplicate' | 'ignored' }
	| { status: 'error'; code: 'processor_not_configured' | 'bad-signature' | 'bad-body' | 'server-error'; detail?: string }

/**
 * Reads the event's subscription fresh, and the customer's others (decision 0013). Repeated trials are
 * cancelled here, before anything is recorded: if that fails, the event is retried.
 */
async function readSubscriptions(processor: Stripe, subscriptionId: string) {
	// Stamped before reading: what comes back is at least this new, so a slow read that returns
	// older state never outranks a later reading. By the database's clock, which every instance shares.
	const observedAt = await databaseNow()
	const subscription = await processor.subscriptions.retrieve(subscriptionId).catch((error: unknown) => {
		// Not in this account (another account's id, or a forged one under a leaked secret; another mode's
		// is refused before, by its livemode): retrying cannot change that, so it is recorded and ignored.
		if ((error as { code?: string }).code === 'resource_missing') return null
		throw error
	})
	if (!subscription) return null
	// Another product's subscription on the same processor account: nothing about the plan changed.
	// Unless it is one stored as a user's plan, whose item an operator has moved to a price not ours:
	// that one is still followed (its cancellation ends the plan).
	if (!isOurs(subscription)) {
		const followed = (await storedAsPlan([subscription])).has(subscription.id)
		return followed ? ({ followed: subscription, observedAt } as const) : ('not-ours' as const)
	}
	// Such a followed subscription is one of the customer's too: left out, an event about another one
	// (an old one of ours, ended) would be shown in its place while it still bills the user.
	const snapshot = await customerSnapshot(processor, subscription, storedAsPlan)
	if (!snapshot) return { toShow: subscription, observedAt, wholeCustomer: false }
	const all = await endRepeatedTrials(processor, snapshot, await userIdForCustomer(customerIdOf(subscription)))
	const paidFor = keptSubscriptions(all)
	if (paidFor.length > 1) {
		console.warn(
			`billing: customer ${customerIdOf(subscription)} keeps ${paidFor.length} live subscriptions (${paidFor.map((s) => s.id).join(', ')}); ` +
				'the status shows the newest: cancel and refund the others in the processor dashboard',
		)
	}
	// A reading of the whole customer, live or not: the newest such reading decides what is shown.
	const toShow = subscriptionToShow(all)
	if (!isOurs(toShow)) return { followed: toShow, observedAt } as const
	return { toShow, observedAt, wholeCustomer: true }
}

// A signing secret that is not this endpoint's (another endpoint's, the other mode's, the CLI's) refuses
// every delivery, and no subscription is ever recorded: the processor's dashboard says so, our log said
// nothing. Signed deliveries refused are noted when first seen, then at most once a minute with a count
// (anyone can post a made-up signature; one without any is not noted).
const noteRefusedSignature = noteOncePerMinute((count) =>
	console.warn(
		`billing: ${count} signed webhook deliver${count === 1 ? 'y' : 'ies'} refused since the last note (400 bad-signature): ` +
			"if they are the processor's, STRIPE_WEBHOOK_SECRET is not this endpoint's signing secret (the Dashboard's webhook endpoint, Signing secret)",
	),
)

/**
 * Verifies and applies one webhook delivery. Each event id takes effect once: the ledger row and the
 * effect commit in one transaction. The effect never trusts the event's copy or its order: the
 * subscription is read fresh from the processor, and storeSubscription keeps only newer state.
 */
export async function handleBillingWebhook(
	rawBody: string,
	signature: string | null,
	notJson: string | null = null,
): Promise<WebhookResult> {
	const secret = env().STRIPE_WEBHOOK_SECRET
	if (!secret) return { status: 'error', code: 'processor_not_configured' }
	if (!hasValidWebhookSignature(rawBody, signature, secret)) {
		if (signature !== null) noteRefusedSignature()
		return { status: 'error', code: 'bad-signature' }
	}
	// Judged after the signature, so a forged delivery is bad-signature whatever it declares. The processor
	// always sends application/json; anything else is refused like every /api/* body (contract §2).
	if (notJson) return { status: 'error', code: 'bad-body', detail: notJson }

	const event: ParsedEvent | null = parseWebhookEvent(rawBody)
	if (!event) return { status: 'error', code: 'bad-body' }
	if (event.id === null) return { status: 'ok', outcome: 'ignored' }

	try {
		if (await db().webhookEvent.findUnique({ where: { id: event.id }, select: { id: true } })) {
			return { status: 'ok', outcome: 'duplicate' }
		}
		const { target } = event
		// Signed, naming a subscription, but no API key to read it with: a 503 is retried by the processor
		// for days, so the event takes effect once STRIPE_SECRET_KEY is set instead of being recorded and
		// lost. Kinds we ignore need no key: they are recorded and answered 200 as always.
		const processor = target ? stripe() : undefined
		if (target && !processor) return { status: 'error', code: 'processor_not_configured' }
		// Likewise an event of the other mode than the key: a live endpoint's signing secret beside a test
		// key (or the reverse). Its subscription cannot be read with this key, and recording it as unknown
		// would lose it; the processor retries a 503 (for up to three days in live mode, a few hours in test
		// mode) and tells the account its deliveries fail.
		const keyMode = secretKeyMode()
		if (target && keyMode && event.livemode !== undefined && event.livemode !== (keyMode === 'live')) {
			console.error(
				`billing: webhook ${event.id} (${event.type}) is a ${event.livemode ? 'live' : 'test'}-mode event but STRIPE_SECRET_KEY is a ${keyMode} key; ` +
					'not recorded, the processor will retry it: set the key and the signing secret of one mode',
			)
			return { status: 'error', code: 'processor_not_configured' }
		}
		// Stripe retries non-2xx for days: record kinds we ignore and answer 200.
		const reading = target && processor ? await readSubscriptions(processor, target.subscriptionId) : null
		if (target && !reading) {
			console.warn(
				`billing: webhook ${event.id} (${event.type}) names subscription ${target.subscriptionId}, unknown to the processor; recorded and ignored`,
			)
		}
		const read = reading === 'not-ours' ? null : reading

		const outcome = await db().$transaction(async (tx) => {
			await tx.webhookEvent.create({ data: { id: event.id, type: event.type } })
			if (!read) return 'ignored' as const
			if (read.followed) return storeFollowedSubscription(read.followed, { observedAt: read.observedAt, tx })
			const { toShow, observedAt, wholeCustomer } = read
			return storeSubscription(toShow, { observedAt, hintUserId: target?.userId, wholeCustomer, tx })
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
