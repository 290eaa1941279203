import { portalLimiter } from '#app/utils/abuse-limits.server.ts'
import { env } from '#app/utils/env.server.ts'
import { stripe } from '#app/utils/stripe.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'

export type PortalResult =
	| { status: 'ok'; url: string }
	| { status: 'error'; code: 'processor_not_configured' | 'no-customer' | 'server-error' }
	| { status: 'error'; code: 'rate-limited'; retryAfterSeconds: number }

/** A customer-portal session (plan changes, cancellation, invoices) returning to the account page. */
export async function openBillingPortal(user: AppUser): Promise<PortalResult> {
	const processor = stripe()
	if (!processor) return { status: 'error', code: 'processor_not_configured' }
	if (!user.stripeCustomerId) return { status: 'error', code: 'no-customer' }
	const limit = await portalLimiter.consume(user.id)
	if (!limit.allowed) return { status: 'error', code: 'rate-limited', retryAfterSeconds: limit.retryAfterSeconds }
	try {
		const session = await processor.billingPortal.sessions.create({
			customer: user.stripeCustomerId,
			return_url: `${env().APP_URL}/account`,
		})
		return { status: 'ok', url: session.url }
	} catch (error) {
		console.error(`billing: portal for user ${user.id} failed: ${(error as Error).message}`)
		await limit.refund() // "safe to retry": the retry must not be held against the user
		return { status: 'error', code: 'server-error' }
	}
}
