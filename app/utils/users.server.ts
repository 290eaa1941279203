import { Prisma } from '#app/generated/prisma/client.ts'
import { db } from './db.server.ts'

export type AppUser = { id: string; clerkId: string; stripeCustomerId: string | null; trialUsed: boolean }

const select = { id: true, clerkId: true, stripeCustomerId: true, trialUsed: true } as const

/**
 * The user's row, created by their first signed-in request. Concurrent first requests race on the
 * unique clerkId: the loser reads the winner's row, so there is always exactly one.
 */
export async function ensureUser(clerkId: string): Promise<AppUser> {
	const existing = await db().user.findUnique({ where: { clerkId }, select })
	if (existing) return existing
	try {
		return await db().user.create({ data: { clerkId }, select })
	} catch (error) {
		if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
			const winner = await db().user.findUnique({ where: { clerkId }, select })
			if (winner) return winner
		}
		throw error
	}
}
