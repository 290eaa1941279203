import type Stripe from 'stripe'
import { db } from '#app/utils/db.server.ts'
import { isGoneAtProcessor, stripe } from '#app/utils/stripe.server.ts'
import { looksLikeUuid } from '#app/utils/uuid.ts'
import { isLiveProcessorStatus, subscriptionState, type SubscriptionState } from '#app/modules/billing/subscription-state.ts'

// The administrator's side of deletion requests, shared by /admin/deletion-requests and
// `npm run admin`. Every state change is kept as a DeletionRequestEvent (who, what, when).

export type PendingForAdmin = {
	requestId: string
	clerkId: string
	submittedAt: Date
	reason: string | null
	subscription: SubscriptionState
}

export async function listPendingDeletionRequests(): Promise<PendingForAdmin[]> {
	const rows = await db().deletionRequest.findMany({
		where: { status: 'pending' },
		orderBy: { submittedAt: 'asc' },
		select: {
			id: true,
			submittedAt: true,
			reason: true,
			user: {
				select: {
					clerkId: true,
					stripeCustomerId: true,
					subscription: { select: { plan: true, processorStatus: true, currentPeriodEnd: true } },
				},
			},
		},
	})
	return rows.map((row) => ({
		requestId: row.id,
		clerkId: row.user.clerkId,
		submittedAt: row.submittedAt,
		reason: row.reason,
		subscription: subscriptionState(row.user.stripeCustomerId, row.user.subscription),
	}))
}

/** `clerkId`: whose request it is, so the page can name it in its answer. */
export type ProcessResult =
	| { status: 'ok'; processedAt: Date; clerkId: string }
	| { status: 'error'; code: 'not-found' }
	| { status: 'error'; code: 'already-processed' | 'withdrawn' | 'still-subscribed' | 'billing-unverified'; clerkId: string }

/**
 * Whether the processor bills the customer now, read from it rather than from what we stored: a
 * subscription paid from a checkout opened before the filing (decision 0020) whose webhook has not
 * arrived yet (Stripe retries a failed delivery for days). `incomplete` counts: its first payment may
 * still go through. `unknown` when the processor cannot be asked now (nothing is marked; the
 * administrator tries again).
 *
 * The customer's checkouts still open are expired first: one opened before the filing stays payable
 * for 24 hours, and paid after the marking it would start a subscription billing an account marked
 * deleted, which nobody can sign in to cancel. One paid meanwhile cannot be expired (Stripe answers
 * 400) and its subscription is in the list read after.
 */
async function billedAtProcessor(customerId: string | null): Promise<'billed' | 'not-billed' | 'unknown'> {
	const processor = stripe()
	if (!processor || !customerId) return 'not-billed'
	let step = `end the open checkouts of ${customerId} at`
	try {
		for await (const session of processor.checkout.sessions.list({ customer: customerId, status: 'open', limit: 100 })) {
			await expireIfPayable(processor, session.id)
		}
		step = `read the subscriptions of ${customerId} from`
		// Without `status`, Stripe lists every subscription but the canceled ones: an old live one is not
		// pushed off the page by many ended since.
		const page = await processor.subscriptions.list({ customer: customerId, limit: 100 })
		return page.data.some((subscription) => isLiveProcessorStatus(subscription.status) || subscription.status === 'incomplete')
			? 'billed'
			: 'not-billed'
	} catch (error) {
		// Deleted in the Dashboard, or a test customer under a live key: this key bills nothing to it. A live
		// customer under a test key may well be billed: unknown.
		if (isGoneAtProcessor(error)) return 'not-billed'
		console.error(`account-deletion: could not ${step} the processor: ${(error as Error).message}`)
		return 'unknown'
	}
}

/**
 * Expires a checkout session. One paid (or expired) since it was listed, or gone, is no longer payable,
 * which is all this asks; any other refusal leaves it payable, and is thrown (nothing is marked). A
 * session gone never says the customer is: only the lists do.
 */
async function expireIfPayable(processor: Stripe, sessionId: string) {
	try {
		await processor.checkout.sessions.expire(sessionId)
	} catch (error) {
		if (isGoneAtProcessor(error)) return
		if ((error as { statusCode?: number }).statusCode !== 400) throw error
		const now = await processor.checkout.sessions.retrieve(sessionId).catch((again: unknown) => {
			if (isGoneAtProcessor(again)) return null
			throw again
		})
		if (now?.status === 'open') throw error
	}
}

/** Marks a pending request processed, refused while the processor still bills the user (or may). */
export async function markDeletionRequestProcessed(requestId: string, adminId: string): Promise<ProcessResult> {
	if (!looksLikeUuid(requestId)) return { status: 'error', code: 'not-found' }
	const owner = await db().deletionRequest.findUnique({
		where: { id: requestId },
		select: { status: true, user: { select: { clerkId: true, stripeCustomerId: true } } },
	})
	if (owner?.status === 'pending') {
		const billed = await billedAtProcessor(owner.user.stripeCustomerId)
		const { clerkId } = owner.user
		if (billed === 'unknown') return { status: 'error', code: 'billing-unverified', clerkId }
		if (billed === 'billed') {
			await db().deletionRequestEvent.create({ data: { requestId, action: 'process-refused-subscribed', actor: adminId } })
			return { status: 'error', code: 'still-subscribed', clerkId }
		}
	}
	// The stored state is checked again below: without processor keys it is all there is.
	return db().$transaction(async (tx) => {
		const request = await tx.deletionRequest.findUnique({
			where: { id: requestId },
			select: { status: true, user: { select: { clerkId: true, subscription: { select: { processorStatus: true } } } } },
		})
		if (!request) return { status: 'error', code: 'not-found' } as const
		const { clerkId } = request.user
		if (request.status === 'withdrawn') return { status: 'error', code: 'withdrawn', clerkId } as const
		if (request.status !== 'pending') return { status: 'error', code: 'already-processed', clerkId } as const
		const processorStatus = request.user.subscription?.processorStatus
		if (processorStatus && isLiveProcessorStatus(processorStatus)) {
			await tx.deletionRequestEvent.create({ data: { requestId, action: 'process-refused-subscribed', actor: adminId } })
			return { status: 'error', code: 'still-subscribed', clerkId } as const
		}
		const processedAt = new Date()
		// Conditional on still pending: two administrators clicking at once record one processing.
		const updated = await tx.deletionRequest.updateMany({
			where: { id: requestId, status: 'pending' },
			data: { status: 'processed', processedAt, processedBy: adminId },
		})
		if (updated.count === 0) {
			// Re-read: a withdrawal or a processing committed since the first read shows here.
			const now = await tx.deletionRequest.findUniqueOrThrow({ where: { id: requestId }, select: { status: true } })
			return { status: 'error', code: now.status === 'withdrawn' ? 'withdrawn' : 'already-processed', clerkId } as const
		}
		await tx.deletionRequestEvent.create({ data: { requestId, action: 'processed', actor: adminId, at: processedAt } })
		return { status: 'ok', processedAt, clerkId } as const
	})
}

export type WithdrawResult =
	| { status: 'ok'; clerkId: string }
	| { status: 'error'; code: 'not-found' }
	| { status: 'error'; code: 'not-pending'; clerkId: string; current: 'processed' | 'withdrawn' }

/**
 * The user changed their mind and asked support (the account page's link names the request): it is
 * closed as withdrawn and nothing is deleted (decision 0021). The user can file again later.
 */
export async function withdrawDeletionRequest(requestId: string, adminId: string): Promise<WithdrawResult> {
	if (!looksLikeUuid(requestId)) return { status: 'error', code: 'not-found' }
	return db().$transaction(async (tx) => {
		const request = await tx.deletionRequest.findUnique({
			where: { id: requestId },
			select: { status: true, user: { select: { clerkId: true } } },
		})
		if (!request) return { status: 'error', code: 'not-found' } as const
		const { clerkId } = request.user
		// Conditional on still pending: a withdrawal racing a processing (or another withdrawal) loses cleanly.
		const updated = await tx.deletionRequest.updateMany({ where: { id: requestId, status: 'pending' }, data: { status: 'withdrawn' } })
		if (updated.count === 0) {
			// Re-read: a concurrent change committed since the first read shows here.
			const now = await tx.deletionRequest.findUniqueOrThrow({ where: { id: requestId }, select: { status: true } })
			return { status: 'error', code: 'not-pending', clerkId, current: now.status === 'withdrawn' ? 'withdrawn' : 'processed' } as const
		}
		await tx.deletionRequestEvent.create({ data: { requestId, action: 'withdrawn', actor: adminId } })
		return { status: 'ok', clerkId } as const
	})
}

/** Whose request `requestId` was, if it is now `status` (the admin page's confirmation names it). */
export async function closedRequestOwner(requestId: string, status: 'processed' | 'withdrawn'): Promise<string | null> {
	if (!looksLikeUuid(requestId)) return null
	const request = await db().deletionRequest.findFirst({
		where: { id: requestId, status },
		select: { user: { select: { clerkId: true } } },
	})
	return request?.user.clerkId ?? null
}

export async function deletionRequestHistory(requestId: string) {
	// Not an id at all: no request has it (PostgreSQL would refuse the uuid, as a failure).
	if (!looksLikeUuid(requestId)) return []
	return db().deletionRequestEvent.findMany({
		where: { requestId },
		orderBy: { at: 'asc' },
		select: { action: true, actor: true, at: true },
	})
}
