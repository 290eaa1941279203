import { Prisma } from '#app/generated/prisma/client.ts'
import { db, queryRows } from './db.server.ts'

export type AppUser = {
	id: string
	clerkId: string
	stripeCustomerId: string | null
	trialUsed: boolean
	/** The processor's status of the user's subscription record, null when they never had one. */
	subscriptionStatus: string | null
}

const select = { id: true, clerkId: true, stripeCustomerId: true, trialUsed: true } as const

// Every signed-in request reads this row: a prepared statement, not a Prisma query (decision 0011).
// The subscription's status comes in the same round trip (one row at most: userId is unique), so
// checkout needs no second query to refuse a second subscription. A capability that needs one more
// row of the user's builds its own statement from these two parts (deletion.server.ts).
export const USER_COLUMNS_SQL = `u."id", u."clerkId", u."stripeCustomerId", u."trialUsed", s."processorStatus" AS "subscriptionStatus"`
export const USER_TABLES_SQL = `"User" u LEFT JOIN "Subscription" s ON s."userId" = u."id"`

const USER_BY_CLERK_ID = {
	name: 'user_with_subscription_status_by_clerk_id',
	text: `SELECT ${USER_COLUMNS_SQL} FROM ${USER_TABLES_SQL} WHERE u."clerkId" = $1`,
}

export async function findUser(clerkId: string): Promise<AppUser | null> {
	const [user] = await queryRows<AppUser>(USER_BY_CLERK_ID, [clerkId])
	return user ?? null
}

/**
 * The user's row, created by their first signed-in request. Concurrent first requests race on the
 * unique clerkId: the loser reads the winner's row, so there is always exactly one.
 */
export async function ensureUser(clerkId: string): Promise<AppUser> {
	const existing = await findUser(clerkId)
	if (existing) return existing
	try {
		// A new row has no subscription: the subscription table references an existing user.
		return { ...(await db().user.create({ data: { clerkId }, select })), subscriptionStatus: null }
	} catch (error) {
		if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
			const winner = await findUser(clerkId)
			if (winner) return winner
		}
		throw error
	}
}
