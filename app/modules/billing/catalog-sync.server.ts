import type Stripe from 'stripe'
import { createOnceUnder } from '#app/utils/stripe.server.ts'
import { lookupKey, PAID_PLANS, PLAN_TABLE, INTERVALS, type Interval, type PaidPlan } from './plans.ts'

// `npm run billing:sync`: makes the processor's catalogue match the plan table, idempotently. Each
// plan is a product with a fixed id (`callsheet_<plan>`); each plan × interval a recurring USD price
// with lookup key `<plan>_<interval>`. A price whose amount changed is replaced: the new price takes
// the lookup key over (transfer_lookup_key) and the old one is archived, as Stripe prices are
// immutable. Finally the customer portal is configured for plan switches and cancellation.
//
// Each create has a fixed idempotency key (two runs at once make one of each), and after a 5xx one
// more attempt under a key of its own (createOnceUnder), so a failure at Stripe does not fail every run
// for a day. What a failed attempt may still have made is harmless: a product id is fixed (the second
// create is refused as already existing: the product is there, made by the first); a price made twice
// loses its lookup key to the second and is never used; a second portal configuration is deactivated
// by the next run (syncPortal).

export type SyncReport = { created: string[]; updated: string[]; unchanged: string[] }

/** The metadata tag of the portal configuration this script manages (portal.server.ts opens sessions on it). */
export const PORTAL_MANAGED_BY = 'callsheet-billing-sync'

const productId = (plan: PaidPlan) => `callsheet_${plan}`
const cents = (plan: PaidPlan, interval: Interval) =>
	(interval === 'year' ? PLAN_TABLE[plan].yearlyPrice : PLAN_TABLE[plan].monthlyPrice) * 100

async function syncProduct(stripe: Stripe, plan: PaidPlan, report: SyncReport) {
	const id = productId(plan)
	const name = `Callsheet ${PLAN_TABLE[plan].name}`
	const existing = await stripe.products.retrieve(id).catch((error: { statusCode?: number }) => {
		if (error.statusCode === 404) return null
		throw error
	})
	if (!existing) {
		await createOnceUnder(`sync-product-${id}`, (idempotencyKey) =>
			stripe.products.create({ id, name, metadata: { plan } }, { idempotencyKey }),
		).catch((error: { code?: string }) => {
			// The first attempt failed at Stripe yet made the product: the id is ours alone, so it is this one.
			if (error.code !== 'resource_already_exists') throw error
		})
		report.created.push(`product ${id}`)
	} else if (existing.name !== name || !existing.active) {
		await stripe.products.update(id, { name, active: true })
		report.updated.push(`product ${id}`)
	} else report.unchanged.push(`product ${id}`)
	return id
}

async function syncPrice(stripe: Stripe, plan: PaidPlan, interval: Interval, product: string, report: SyncReport) {
	const key = lookupKey(plan, interval)
	const amount = cents(plan, interval)
	const [current] = (await stripe.prices.list({ lookup_keys: [key], limit: 1 })).data
	const matches =
		current?.active && current.unit_amount === amount && current.currency === 'usd' && current.recurring?.interval === interval
	if (current && matches) {
		report.unchanged.push(`price ${key}`)
		return current.id
	}
	// The key moves to the new price, and subscribers stay on this one: first it says which plan it is
	// (planOfPrice), as every price the sync makes does, so a price made by hand with only the key is
	// still known for the plan it bills.
	if (current && (current.metadata?.plan !== plan || current.metadata?.interval !== interval)) {
		await stripe.prices.update(current.id, { metadata: { plan, interval } })
	}
	const params: Stripe.PriceCreateParams = {
		product,
		currency: 'usd',
		unit_amount: amount,
		recurring: { interval },
		lookup_key: key,
		transfer_lookup_key: true,
		nickname: `${PLAN_TABLE[plan].name} (${interval === 'year' ? 'yearly' : 'monthly'})`,
		metadata: { plan, interval },
	}
	const price = await createOnceUnder(`sync-price-${key}-${amount}-replacing-${current?.id ?? 'none'}`, (idempotencyKey) =>
		stripe.prices.create(params, { idempotencyKey }),
	)
	if (current && current.id !== price.id) await stripe.prices.update(current.id, { active: false })
	;(current ? report.updated : report.created).push(`price ${key}`)
	return price.id
}

async function syncPortal(stripe: Stripe, pricesByProduct: Map<string, string[]>, appUrl: string, report: SyncReport) {
	const settings: Stripe.BillingPortal.ConfigurationCreateParams = {
		business_profile: { headline: 'Manage your Callsheet subscription' },
		default_return_url: `${appUrl}/account`,
		features: {
			customer_update: { enabled: true, allowed_updates: ['email', 'address', 'tax_id'] },
			invoice_history: { enabled: true },
			payment_method_update: { enabled: true },
			subscription_cancel: { enabled: true, mode: 'at_period_end' },
			subscription_update: {
				enabled: true,
				default_allowed_updates: ['price'],
				proration_behavior: 'create_prorations',
				products: [...pricesByProduct].map(([product, prices]) => ({ product, prices })),
			},
		},
		metadata: { managedBy: PORTAL_MANAGED_BY },
	}
	const configurations = await stripe.billingPortal.configurations.list({ limit: 100 })
	// Oldest first: the one running instances have most likely looked up already (portal.server.ts).
	const tagged = configurations.data.filter((c) => c.metadata?.managedBy === PORTAL_MANAGED_BY).sort((a, b) => a.created - b.created)
	// One of ours is kept up to date (an active one first, as portal sessions look for); any other (a
	// create that failed at Stripe yet made one, a copy made by hand) is deactivated, so sessions never
	// open on a configuration this script no longer updates.
	const ours = tagged.find((c) => c.active) ?? tagged[0]
	for (const extra of tagged) {
		if (extra === ours || !extra.active) continue
		await stripe.billingPortal.configurations.update(extra.id, { active: false })
		report.updated.push(`portal configuration ${extra.id} (deactivated: a second one of ours)`)
	}
	if (ours) {
		// Active again if someone deactivated it in the Dashboard: the app opens portal sessions only on an
		// active configuration of ours, and says to run this sync when it finds none.
		await stripe.billingPortal.configurations.update(ours.id, { ...settings, active: true })
		report.updated.push(`portal configuration ${ours.id}`)
	} else {
		const created = await createOnceUnder('sync-portal-configuration-v1', (idempotencyKey) =>
			stripe.billingPortal.configurations.create(settings, { idempotencyKey }),
		)
		report.created.push(`portal configuration ${created.id}`)
	}
}

export async function syncBillingCatalog(stripe: Stripe, appUrl: string): Promise<SyncReport> {
	const report: SyncReport = { created: [], updated: [], unchanged: [] }
	const pricesByProduct = new Map<string, string[]>()
	for (const plan of PAID_PLANS) {
		const product = await syncProduct(stripe, plan, report)
		const prices: string[] = []
		for (const interval of INTERVALS) prices.push(await syncPrice(stripe, plan, interval, product, report))
		pricesByProduct.set(product, prices)
	}
	await syncPortal(stripe, pricesByProduct, appUrl, report)
	return report
}
