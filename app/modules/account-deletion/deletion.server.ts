import crypto from 'node:crypto'
import { Prisma } from '#app/generated/prisma/client.ts'
import { deletionLimiter, deletionReasonLimiter } from '#app/utils/abuse-limits.server.ts'
import { db, queryRows, sqlStateOf } from '#app/utils/db.server.ts'
import { primaryEmail, type PrimaryEmailResult } from '#app/utils/identity.server.ts'
import { ensureUser, USER_COLUMNS_SQL, USER_TABLES_SQL, type AppUser } from '#app/utils/users.server.ts'
import type { DeletionRequestInput } from '#app/utils/validation/account.ts'
import { comparableEmail } from '#app/utils/validation/email.ts'

// Filing an account-deletion request: one rule set for POST /api/account/delete-request and the
// account page's danger zone. Nothing is deleted here: an administrator processes the request once
// billing has settled (admin.server.ts).

export type PendingRequest = { requestId: string; submittedAt: Date }
/** A pending request as filing reads it: with the hash of the email typed back when it was filed, and its reason. */
type PendingFiling = PendingRequest & { confirmedEmailHash: string | null; reason: string | null }

/**
 * What a pending request keeps of the email that proved intent (decision 0014): enough to recognise
 * the same email typed again, without keeping the address after the account is gone.
 */
const confirmedEmailHash = (userId: string, email: string) => crypto.hash('sha256', `${userId}\n${comparableEmail(email)}`, 'hex')

export type DeletionResult =
	| ({ status: 'ok' } & PendingRequest)
	| { status: 'table-missing' }
	| { status: 'error'; code: 'email-mismatch' | 'unauthorized' | 'identity-provider-unavailable' | 'db-error'; detail?: string }
	/** An account with no primary email (signed up with a phone number or a username): nothing typed can confirm it. */
	| { status: 'error'; code: 'email-mismatch'; detail: string; noAccountEmail: true }
	| { status: 'error'; code: 'rate-limited'; retryAfterSeconds: number }

/** One log line: Prisma's messages run over several ("Invalid `prisma.….create()` invocation:" and the cause). */
function noteStoringFailed(user: AppUser, error: unknown) {
	const message = (error as Error).message.replace(/\s*\n\s*/g, ' ').trim()
	console.error(`account-deletion: storing the request of user ${user.id} failed: ${message}`)
}

/**
 * The deletion table is not there (contract: `table_missing`). Prisma reports a missing table as P2021,
 * a prepared read PostgreSQL's own 42P01; either names the table. Another one missing (the audit
 * trail's, the users') is a database fault like any other: 500 db-error, to retry once it is mended.
 */
function isMissingTable(error: unknown) {
	let said: unknown
	if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2021') said = error.meta?.table ?? error.message
	else if (sqlStateOf(error) === '42P01') said = (error as Error).message
	else return false
	// `public.DeletionRequest`, `relation "DeletionRequest" does not exist`, "The table `public.DeletionRequest` does not exist…"
	return MISSING_TABLE_NAME.exec(String(said))?.[1] === 'DeletionRequest'
}
const MISSING_TABLE_NAME = /([A-Za-z_][A-Za-z0-9_]*)["`]?(?:\s+does not exist|$)/

function isUniqueViolation(error: unknown) {
	return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002'
}

// A user files again with the same request pending: read on every filing, so prepared (decision 0011).
const PENDING_REQUEST_OF_USER = {
	name: 'pending_deletion_request_of_user',
	text: `SELECT "id" AS "requestId", "submittedAt", "confirmedEmailHash", "reason" FROM "DeletionRequest" WHERE "userId" = $1 AND "status" = 'pending' LIMIT 1`,
}

export async function pendingDeletionRequest(userId: string): Promise<PendingFiling | null> {
	const [pending] = await queryRows<PendingFiling>(PENDING_REQUEST_OF_USER, [userId])
	return pending ?? null
}

const PENDING_REQUEST_BY_CLERK_ID = {
	name: 'pending_deletion_request_by_clerk_id',
	text: `SELECT d."id" AS "requestId", d."submittedAt" FROM "DeletionRequest" d JOIN "User" u ON u."id" = d."userId"
		WHERE u."clerkId" = $1 AND d."status" = 'pending' LIMIT 1`,
}

/** The pending request of a signed-in user known by their identity-provider id (the pricing page). */
export async function pendingDeletionRequestOf(clerkId: string): Promise<PendingRequest | null> {
	const [pending] = await queryRows<PendingRequest>(PENDING_REQUEST_BY_CLERK_ID, [clerkId])
	return pending ?? null
}

/**
 * Whether the user has asked for their account to be deleted and the request is still pending:
 * checkout stops offering new subscriptions then. Read again only when it was not read with the
 * user's row. No deletion table means no request.
 */
export async function hasPendingDeletionRequest({ user, pending }: UserWithPendingDeletion): Promise<boolean> {
	if (pending !== undefined) return pending !== null
	try {
		return (await pendingDeletionRequest(user.id)) !== null
	} catch (error) {
		if (isMissingTable(error)) return false
		throw error
	}
}

// The filer's row and their pending request in one round trip: filing again while a request is
// pending is the common case, and then it costs no query of its own (decision 0011). At most one
// pending request per user (a partial unique index), so at most one row.
const USER_WITH_PENDING_REQUEST = {
	name: 'user_with_pending_deletion_request_by_clerk_id',
	text: `SELECT ${USER_COLUMNS_SQL}, d."id" AS "pendingRequestId", d."submittedAt" AS "pendingSubmittedAt",
			d."confirmedEmailHash" AS "pendingConfirmedEmailHash", d."reason" AS "pendingReason"
		FROM ${USER_TABLES_SQL} LEFT JOIN "DeletionRequest" d ON d."userId" = u."id" AND d."status" = 'pending'
		WHERE u."clerkId" = $1`,
}

type UserWithPendingRow = AppUser & {
	pendingRequestId: string | null
	pendingSubmittedAt: Date | null
	pendingConfirmedEmailHash: string | null
	pendingReason: string | null
}

/** A signed-in user, and their pending deletion request when it was read with their row (undefined: not read). */
export type UserWithPendingDeletion = { user: AppUser; pending?: PendingFiling | null }

/**
 * The signed-in user with their pending deletion request, in one round trip, their row created on
 * first use: for filing (POST /api/account/delete-request) and for checkout, which refuses while a
 * request is pending (0020).
 */
export async function userWithPendingDeletion(clerkId: string): Promise<UserWithPendingDeletion> {
	try {
		const [row] = await queryRows<UserWithPendingRow>(USER_WITH_PENDING_REQUEST, [clerkId])
		if (row) {
			const { pendingRequestId, pendingSubmittedAt, pendingConfirmedEmailHash, pendingReason, ...user } = row
			const pending =
				pendingRequestId && pendingSubmittedAt
					? {
							requestId: pendingRequestId,
							submittedAt: pendingSubmittedAt,
							confirmedEmailHash: pendingConfirmedEmailHash,
							reason: pendingReason,
						}
					: null
			return { user, pending }
		}
	} catch (error) {
		// Without the deletion table the user is read alone, and filing answers table-missing as before.
		if (!isMissingTable(error)) throw error
	}
	return { user: await ensureUser(clerkId) }
}

/**
 * Filing again with another reason: the answer says `saved`, so the reason given is the one kept (it
 * was dropped, and only the first was stored), with an audit entry. A filing without one keeps the
 * reason there is. The request keeps its id and time (contract.md §2). `closed` when the request was
 * withdrawn or processed since it was read: nothing was saved on it, and the filing is a new one.
 * Each change counts against a per-user limit of its own, whichever path the filing took (a burst
 * sharing one question to the identity provider included): each writes a row and an audit entry.
 */
async function keepReason(user: AppUser, pending: PendingFiling, reason: string | null): Promise<Kept> {
	if (!changesReason(pending, reason)) return { status: 'kept', request: pending }
	const limit = await deletionReasonLimiter.consume(user.id)
	if (!limit.allowed) return { status: 'limited', retryAfterSeconds: limit.retryAfterSeconds }
	let changed: boolean
	try {
		changed = await db().$transaction(async (tx) => {
			const { count } = await tx.deletionRequest.updateMany({ where: { id: pending.requestId, status: 'pending' }, data: { reason } })
			if (count > 0)
				await tx.deletionRequestEvent.create({ data: { requestId: pending.requestId, action: 'reason-changed', actor: user.clerkId } })
			return count > 0
		})
	} catch (error) {
		await limit.refund()
		throw error
	}
	if (!changed) {
		await limit.refund()
		return { status: 'closed' }
	}
	return { status: 'kept', request: pending }
}

type Kept = { status: 'kept'; request: PendingRequest } | { status: 'closed' } | { status: 'limited'; retryAfterSeconds: number }

const changesReason = (pending: PendingFiling, reason: string | null) => reason !== null && reason !== pending.reason

/** Creates the pending request and its audit entry together; a concurrent twin makes us read theirs. */
async function createPending(user: AppUser, input: DeletionRequestInput): Promise<Exclude<Kept, { status: 'closed' }>> {
	const { confirmEmail, reason } = input
	try {
		const created = await db().$transaction(async (tx) => {
			const request = await tx.deletionRequest.create({
				data: { userId: user.id, reason, confirmedEmailHash: confirmedEmailHash(user.id, confirmEmail) },
				select: { id: true, submittedAt: true },
			})
			await tx.deletionRequestEvent.create({ data: { requestId: request.id, action: 'filed', actor: user.clerkId } })
			return request
		})
		return { status: 'kept', request: { requestId: created.id, submittedAt: created.submittedAt } }
	} catch (error) {
		if (!isUniqueViolation(error)) throw error
		const existing = await pendingDeletionRequest(user.id)
		if (!existing) throw error
		const kept = await keepReason(user, existing, reason)
		return kept.status === 'closed' ? createPending(user, input) : kept
	}
}

/** Whether `email` is the one typed back when `pending` was filed (decision 0014). */
const confirmedWith = (user: AppUser, pending: PendingFiling | null | undefined, email: string) =>
	Boolean(pending?.confirmedEmailHash && pending.confirmedEmailHash === confirmedEmailHash(user.id, email))

const answerOf = (filed: Exclude<Kept, { status: 'closed' }>): DeletionResult =>
	filed.status === 'kept'
		? { status: 'ok', requestId: filed.request.requestId, submittedAt: filed.request.submittedAt }
		: { status: 'error', code: 'rate-limited', retryAfterSeconds: filed.retryAfterSeconds }

/**
 * A filing again with the email that proved intent the first time: the pending request (contract.md
 * §2), without asking the identity provider or counting against its limit (decision 0014). Null when
 * the request was withdrawn or processed meanwhile: the filing is then a new one.
 */
async function fileAgain(user: AppUser, pending: PendingFiling, reason: string | null): Promise<DeletionResult | null> {
	let kept: Kept
	try {
		kept = await keepReason(user, pending, reason)
	} catch (error) {
		if (isMissingTable(error)) return { status: 'table-missing' }
		noteStoringFailed(user, error)
		return { status: 'error', code: 'db-error' }
	}
	return kept.status === 'closed' ? null : answerOf(kept)
}

type ProviderAnswer =
	{ status: 'limited'; retryAfterSeconds: number } | { status: 'asked'; lookup: PrimaryEmailResult; refund: () => Promise<void> }

const askingProvider = new Map<string, Promise<ProviderAnswer>>()

/**
 * The account's email from the identity provider for a filing, counted against the per-user limit,
 * which is there for these calls. Filings of one user that arrive together (a double click, a client
 * sending the same request several times) share one call and one point: they are one filing, answered
 * with one request (contract.md §2), which a limit met halfway through the burst would break. The
 * point is given back at most once, when one of them fails on our side (even if another of the burst
 * stored the request: at most one call a burst goes uncounted).
 */
function askProviderOnce(user: AppUser): Promise<ProviderAnswer> {
	const inFlight = askingProvider.get(user.id)
	if (inFlight) return inFlight
	const answer = (async (): Promise<ProviderAnswer> => {
		const limit = await deletionLimiter.consume(user.id)
		if (!limit.allowed) return { status: 'limited', retryAfterSeconds: limit.retryAfterSeconds }
		let refunded = false
		const refund = async () => {
			if (refunded) return
			refunded = true
			await limit.refund()
		}
		return { status: 'asked', lookup: await primaryEmail(user.clerkId), refund }
	})().finally(() => {
		if (askingProvider.get(user.id) === answer) askingProvider.delete(user.id)
	})
	askingProvider.set(user.id, answer)
	return answer
}

export async function fileDeletionRequest(
	{ user, pending: readWithUser }: UserWithPendingDeletion,
	input: DeletionRequestInput,
): Promise<DeletionResult> {
	// Whether a request may have been stored since the user's row was read: none was pending then, or
	// the one confirmed with this email was closed meanwhile.
	let storedSinceRead = readWithUser === null
	if (readWithUser && confirmedWith(user, readWithUser, input.confirmEmail)) {
		const answered = await fileAgain(user, readWithUser, input.reason)
		if (answered) return answered
		storedSinceRead = true
	}
	const asked = await askProviderOnce(user)
	if (asked.status === 'limited') {
		// A filing of a burst that missed the burst's shared question finds the request the burst stored:
		// filing again with its email, it gets that request, not a 429 (0014). A failed look is the 429.
		const since = storedSinceRead ? await pendingDeletionRequest(user.id).catch(() => null) : null
		const answered = since && confirmedWith(user, since, input.confirmEmail) ? await fileAgain(user, since, input.reason) : null
		return answered ?? { status: 'error', code: 'rate-limited', retryAfterSeconds: asked.retryAfterSeconds }
	}
	const { lookup, refund } = asked
	// Failures on our side say "safe to retry": the retry must not be held against the user (as contact).
	if (lookup.status === 'unavailable') return (await refund(), { status: 'error', code: 'identity-provider-unavailable' })
	// The session is valid but the provider no longer knows the account: treat it as signed out.
	if (lookup.status === 'unknown-user') return { status: 'error', code: 'unauthorized' }
	if (!lookup.email) {
		const detail = 'This account has no primary email address at the identity provider, so no email can confirm the request: ask support.'
		return { status: 'error', code: 'email-mismatch', detail, noAccountEmail: true }
	}
	if (comparableEmail(lookup.email) !== comparableEmail(input.confirmEmail)) return { status: 'error', code: 'email-mismatch' }
	try {
		// Filing again while a request is pending returns that request: no second row. Read again after
		// the identity provider answered: the one read with the user may have been withdrawn or processed
		// meanwhile (answered saved, it was closed). One filed by a concurrent twin since makes
		// createPending read theirs.
		const known = await pendingDeletionRequest(user.id)
		const kept: Kept = known ? await keepReason(user, known, input.reason) : { status: 'closed' }
		return answerOf(kept.status === 'closed' ? await createPending(user, input) : kept)
	} catch (error) {
		// Nothing was filed either way: the point goes back (the page answers table-missing with a 503).
		await refund()
		if (isMissingTable(error)) return { status: 'table-missing' }
		noteStoringFailed(user, error)
		return { status: 'error', code: 'db-error' }
	}
}
