import type Stripe from 'stripe'
import { portalLimiter } from '#app/utils/abuse-limits.server.ts'
import { env } from '#app/utils/env.server.ts'
import { stripe } from '#app/utils/stripe.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'
import { PORTAL_MANAGED_BY } from './catalog-sync.server.ts'
import { forgetCustomer, isUnknownCustomer, noteUnknownCustomer } from './customer.server.ts'
import { confirmStoredSubscription } from './stored-subscription-check.server.ts'

export type PortalResult =
	| { status: 'ok'; url: string }
	| { status: 'error'; code: 'processor_not_configured' | 'no-customer' | 'server-error' }
	| { status: 'error'; code: 'rate-limited'; retryAfterSeconds: number }

// A session without `configuration` opens on the account's default configuration, and only the
// Dashboard makes one the default: the configuration `npm run billing:sync` manages (switching between
// our prices, cancelling at period end) applies only when named.
// https://docs.stripe.com/api/customer_portal/sessions/create#create_portal_session-configuration
let managed: Promise<string | null> | undefined
let toldToSync = false

const forget = (lookup: Promise<string | null>) => {
	if (managed === lookup) managed = undefined
}

/** Our configuration's id, looked up once per process. */
function managedConfiguration(processor: Stripe): Promise<string | null> {
	if (managed) return managed
	const lookup = findManagedConfiguration(processor)
	managed = lookup
	// Kept only once found: a failed lookup is tried again, and a sync run later needs no restart.
	void lookup.then(
		(id) => (id ? undefined : forget(lookup)),
		() => forget(lookup),
	)
	return lookup
}

async function findManagedConfiguration(processor: Stripe): Promise<string | null> {
	const { data } = await processor.billingPortal.configurations.list({ active: true, limit: 100 })
	const id = data.find((c) => c.metadata?.managedBy === PORTAL_MANAGED_BY)?.id ?? null
	if (!id && !toldToSync) {
		toldToSync = true
		console.warn(
			"billing: no customer-portal configuration from the sync: portal sessions use the Stripe account's default settings until an operator runs npm run billing:sync",
		)
	}
	return id
}

/** A customer-portal session (plan changes, cancellation, invoices) returning to the account page. */
export async function openBillingPortal(user: AppUser): Promise<PortalResult> {
	const processor = stripe()
	if (!processor) return { status: 'error', code: 'processor_not_configured' }
	if (!user.stripeCustomerId) return { status: 'error', code: 'no-customer' }
	const limit = await portalLimiter.consume(user.id)
	if (!limit.allowed) return { status: 'error', code: 'rate-limited', retryAfterSeconds: limit.retryAfterSeconds }
	const customer = user.stripeCustomerId
	const open = (configuration: string | null) =>
		processor.billingPortal.sessions.create({
			customer,
			return_url: `${env().APP_URL}/account`,
			...(configuration ? { configuration } : {}),
		})
	const lookup = managedConfiguration(processor)
	try {
		const configuration = await lookup
		const session = await open(configuration).catch(async (error: unknown) => {
			// Our configuration refused (deactivated in the Dashboard, or gone with a reset sandbox):
			// look again and open on what the account has now, rather than fail this user once per process.
			if (!configuration || (error as { param?: unknown }).param !== 'configuration') throw error
			forget(lookup)
			const current = await managedConfiguration(processor)
			console.log(
				`billing: portal configuration ${configuration} was refused by the processor (${(error as Error).message}); the portal opens on ${current ?? "the account's default"}`,
			)
			return open(current)
		})
		return { status: 'ok', url: session.url }
	} catch (error) {
		await limit.refund() // "safe to retry" or nothing to open: neither is held against the user
		// A customer the processor does not know has no billing to manage: the next checkout makes one.
		if (isUnknownCustomer(error)) {
			noteUnknownCustomer(user, user.stripeCustomerId, 'forgotten, so the next checkout makes a new one')
			// Its subscriptions ended with it (cancelled, or gone with a reset sandbox): the stored one would
			// keep showing a plan and refusing checkout. Confirmed first: storing the reading fills an empty
			// customer id, which would bring back the one forgotten here.
			await confirmStoredSubscription(processor, user.id).catch((failure: unknown) =>
				console.warn(`billing: could not confirm the stored subscription of user ${user.id}: ${(failure as Error).message}`),
			)
			// Not forgotten, the next click asks the processor again and forgets it then: a retry, not a refusal.
			// Thrown, the API's 500 came without the log line and the account page showed the generic error page.
			const forgotten = await forgetCustomer(user, user.stripeCustomerId).then(
				() => true,
				(failure: unknown) => {
					console.error(`billing: could not forget customer ${customer} of user ${user.id}: ${(failure as Error).message}`)
					return false
				},
			)
			return forgotten ? { status: 'error', code: 'no-customer' } : { status: 'error', code: 'server-error' }
		}
		console.error(`billing: portal for user ${user.id} failed: ${(error as Error).message}`)
		return { status: 'error', code: 'server-error' }
	}
}
