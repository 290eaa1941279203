import { Prisma } from '#app/generated/prisma/client.ts'
import { deletionLimiter } from '#app/utils/abuse-limits.server.ts'
import { db, queryRows, sqlStateOf } from '#app/utils/db.server.ts'
import { primaryEmail } from '#app/utils/identity.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'
import type { DeletionRequestInput } from '#app/utils/validation/account.ts'

// Filing an account-deletion request: one rule set for POST /api/account/delete-request and the
// account page's danger zone. Nothing is deleted here: an administrator processes the request once
// billing has settled (admin.server.ts).

export type PendingRequest = { requestId: string; submittedAt: Date }

export type DeletionResult =
	| ({ status: 'ok' } & PendingRequest)
	| { status: 'table-missing' }
	| { status: 'error'; code: 'email-mismatch' | 'unauthorized' | 'identity-provider-unavailable' | 'db-error'; detail?: string }
	| { status: 'error'; code: 'rate-limited'; retryAfterSeconds: number }

// Prisma reports a missing table as P2021; a prepared read gets PostgreSQL's own 42P01.
function isMissingTable(error: unknown) {
	return (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2021') || sqlStateOf(error) === '42P01'
}

function isUniqueViolation(error: unknown) {
	return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002'
}

// A user files again with the same request pending: read on every filing, so prepared (decision 0011).
const PENDING_REQUEST_OF_USER = {
	name: 'pending_deletion_request_of_user',
	text: `SELECT "id" AS "requestId", "submittedAt" FROM "DeletionRequest" WHERE "userId" = $1 AND "status" = 'pending' LIMIT 1`,
}

export async function pendingDeletionRequest(userId: string): Promise<PendingRequest | null> {
	const [pending] = await queryRows<PendingRequest>(PENDING_REQUEST_OF_USER, [userId])
	return pending ?? null
}

/** Creates the pending request and its audit entry together; a concurrent twin makes us read theirs. */
async function createPending(user: AppUser, reason: string | null): Promise<PendingRequest> {
	try {
		const created = await db().$transaction(async (tx) => {
			const request = await tx.deletionRequest.create({ data: { userId: user.id, reason }, select: { id: true, submittedAt: true } })
			await tx.deletionRequestEvent.create({ data: { requestId: request.id, action: 'filed', actor: user.clerkId } })
			return request
		})
		return { requestId: created.id, submittedAt: created.submittedAt }
	} catch (error) {
		if (!isUniqueViolation(error)) throw error
		const existing = await pendingDeletionRequest(user.id)
		if (!existing) throw error
		return existing
	}
}

export async function fileDeletionRequest(user: AppUser, input: DeletionRequestInput): Promise<DeletionResult> {
	// Each attempt costs a call to the identity provider: limit attempts per user.
	const limit = await deletionLimiter.consume(user.id)
	if (!limit.allowed) return { status: 'error', code: 'rate-limited', retryAfterSeconds: limit.retryAfterSeconds }
	const lookup = await primaryEmail(user.clerkId)
	if (lookup.status === 'unavailable') return { status: 'error', code: 'identity-provider-unavailable' }
	// The session is valid but the provider no longer knows the account: treat it as signed out.
	if (lookup.status === 'unknown-user') return { status: 'error', code: 'unauthorized' }
	if (!lookup.email || lookup.email.trim().toLowerCase() !== input.confirmEmail.trim().toLowerCase()) {
		return { status: 'error', code: 'email-mismatch' }
	}
	try {
		// Filing again while a request is pending returns that request: no second row.
		const pending = (await pendingDeletionRequest(user.id)) ?? (await createPending(user, input.reason))
		return { status: 'ok', ...pending }
	} catch (error) {
		if (isMissingTable(error)) return { status: 'table-missing' }
		console.error(`account-deletion: storing the request of user ${user.id} failed: ${(error as Error).message}`)
		return { status: 'error', code: 'db-error' }
	}
}
