// In-memory state of the fake Stripe account, shared by the API routes, the hosted pages
// and the test helpers.
import { nowSeconds } from '../http-util.js'
import { int, obj, str, type FormObject } from './form.js'
import {
	PLANS,
	SEED_MONTHLY_CENTS,
	accountDefaultPortalConfiguration,
	customerObject,
	portalConfigurationObject,
	priceObject,
	productObject,
	subscriptionObject,
	type Interval,
	type PlanName,
	type StripeObject,
	type SubscriptionStatus,
} from './objects.js'

export interface SeedSubscription {
	customer: string
	plan: PlanName | string
	interval?: Interval
	status?: SubscriptionStatus
	userId?: string
	/** Unix seconds; defaults to one interval from now. */
	periodEnd?: number
	trialEnd?: number | null
}

/** The objects a key of one mode never sees of the other. */
const MODE_SCOPED = new Set(['customer', 'subscription'])

export class StripeStore {
	/** Every object by id: one map makes `expand[]` generic. */
	readonly objects = new Map<string, StripeObject>()
	/** Full parsed params of each checkout session, by session id. */
	readonly checkoutParams = new Map<string, FormObject>()

	constructor() {
		// Every account has a default portal configuration, which sessions that name none use.
		this.put(accountDefaultPortalConfiguration())
	}

	/**
	 * The mode of the API request being handled (its key's), undefined outside one (the tests' own
	 * reads, the hosted pages). Customers and subscriptions of the other mode are not found by a
	 * request, as at Stripe. The catalogue (products, prices, portal configurations) is shared by both
	 * modes here, so that a live key's checkout finds the seeded plans: a difference from Stripe.
	 */
	requestLivemode: boolean | undefined

	put<T extends StripeObject>(object: T): T {
		if (this.requestLivemode !== undefined && !this.objects.has(object.id)) Object.assign(object, { livemode: this.requestLivemode })
		this.objects.set(object.id, object)
		return object
	}

	private inRequestMode(object: StripeObject) {
		return this.requestLivemode === undefined || !MODE_SCOPED.has(String(object.object)) || object.livemode === this.requestLivemode
	}

	get(id: string, type?: string): StripeObject | undefined {
		const found = this.objects.get(id)
		return found && (!type || found.object === type) && this.inRequestMode(found) ? found : undefined
	}

	all(type: string): StripeObject[] {
		return [...this.objects.values()].filter((o) => o.object === type && this.inRequestMode(o))
	}

	/**
	 * Stripe shows a subscription's price as the price is now (a lookup key moved to another price, an
	 * archived price): the copies this fake keeps on subscription items follow a change to the price.
	 */
	priceChanged(price: StripeObject): void {
		for (const subscription of this.all('subscription')) {
			for (const item of (subscription.items as { data: StripeObject[] }).data) {
				if ((item.price as StripeObject).id === price.id) item.price = structuredClone(price)
			}
		}
	}

	priceByLookupKey(key: string): StripeObject | undefined {
		return this.all('price').find((p) => p.lookup_key === key)
	}

	/** A product per plan and a price per plan × interval, with lookup keys `<plan>_<interval>`. */
	seedPlans(): void {
		for (const plan of PLANS) {
			const name = plan[0]?.toUpperCase() + plan.slice(1)
			const product = this.put(productObject({ name, metadata: { plan } }))
			for (const interval of ['month', 'year'] as const) {
				const monthly = SEED_MONTHLY_CENTS[plan]
				this.put(
					priceObject({
						product: product.id,
						unit_amount: interval === 'year' ? monthly * 10 : monthly,
						interval,
						lookup_key: `${plan}_${interval}`,
						nickname: `${name} (${interval})`,
						metadata: { plan, interval },
					}),
				)
			}
		}
	}

	/** The portal configuration `npm run billing:sync` would leave: tagged as it tags it, offering every price. */
	seedSyncedPortalConfiguration(): StripeObject {
		const products = this.all('product').map((product) => ({
			product: product.id,
			prices: this.all('price')
				.filter((price) => price.product === product.id && price.active)
				.map((price) => price.id),
		}))
		return this.put(
			portalConfigurationObject({
				metadata: { managedBy: 'callsheet-billing-sync' },
				features: {
					customer_update: { enabled: true, allowed_updates: ['email', 'address', 'tax_id'] },
					invoice_history: { enabled: true },
					payment_method_update: { enabled: true },
					subscription_cancel: { enabled: true, mode: 'at_period_end', proration_behavior: 'none' },
					subscription_update: { enabled: true, default_allowed_updates: ['price'], products, proration_behavior: 'create_prorations' },
				},
			}),
		)
	}

	/** Looks up (or, when prices were not seeded, creates) the price for a plan. */
	ensurePrice(plan: string, interval: Interval): StripeObject {
		const key = `${plan}_${interval}`
		const existing = this.priceByLookupKey(key)
		if (existing) return existing
		const product = this.put(productObject({ name: plan, metadata: { plan } }))
		return this.put(priceObject({ product: product.id, unit_amount: 1000, interval, lookup_key: key }))
	}

	createCustomer(fields: Partial<StripeObject> = {}): StripeObject {
		return this.put(customerObject(fields))
	}

	createSubscription(seed: SeedSubscription): StripeObject {
		const interval = seed.interval ?? 'month'
		return this.put(
			subscriptionObject({
				customer: seed.customer,
				price: this.ensurePrice(seed.plan, interval),
				...(seed.status ? { status: seed.status } : {}),
				...(seed.periodEnd ? { periodEnd: seed.periodEnd } : {}),
				trialEnd: seed.trialEnd ?? null,
				metadata: seed.userId ? { userId: seed.userId } : {},
			}),
		)
	}

	setSubscriptionStatus(id: string, status: SubscriptionStatus): StripeObject {
		const sub = this.get(id, 'subscription')
		if (!sub) throw new Error(`fake stripe: no subscription ${id}`)
		sub.status = status
		if (status === 'canceled') {
			sub.canceled_at ??= nowSeconds()
			sub.ended_at ??= nowSeconds()
		}
		return sub
	}

	/**
	 * What paying on the hosted page does: a customer if the session had none, a subscription
	 * (trialing when subscription_data[trial_period_days] was given), the session marked complete.
	 */
	completeCheckout(sessionId: string): { session: StripeObject; subscription: StripeObject } {
		const session = this.get(sessionId, 'checkout.session')
		if (!session) throw new Error(`fake stripe: no checkout session ${sessionId}`)
		const params = this.checkoutParams.get(sessionId) ?? {}
		const subData = obj(params.subscription_data) ?? {}
		const trialDays = int(subData.trial_period_days)
		const trialEnd = int(subData.trial_end) ?? (trialDays ? nowSeconds() + trialDays * 86_400 : null)
		let customerId = typeof session.customer === 'string' ? session.customer : undefined
		// Made in the mode of the session, as Stripe makes them.
		const livemode = session.livemode === true
		if (!customerId) {
			const email = typeof session.customer_email === 'string' ? session.customer_email : null
			customerId = this.createCustomer({ email, livemode }).id
		}
		const priceId = str(obj((params.line_items as FormObject[] | undefined)?.[0])?.price)
		const price = (priceId && this.get(priceId, 'price')) || this.ensurePrice('solo', 'month')
		const metadata = Object.fromEntries(Object.entries(obj(subData.metadata) ?? {}).filter(([, v]) => typeof v === 'string')) as Record<
			string,
			string
		>
		const subscription = this.put({ ...subscriptionObject({ customer: customerId, price, metadata, trialEnd }), livemode })
		const customer = this.get(customerId, 'customer')
		Object.assign(session, {
			status: 'complete',
			payment_status: trialEnd ? 'no_payment_required' : 'paid',
			customer: customerId,
			customer_details: {
				address: null,
				email: customer?.email ?? null,
				name: customer?.name ?? null,
				phone: null,
				tax_exempt: 'none',
				tax_ids: [],
			},
			subscription: subscription.id,
			url: null,
		})
		return { session, subscription }
	}

	/** Applies `expand[]` paths such as `subscription`, `data.product` or `items.data.price.product`. */
	expand(value: unknown, paths: string[]): unknown {
		let out: unknown = structuredClone(value)
		for (const path of paths) out = this.expandPath(out, path.split('.'))
		return out
	}

	private expandPath(value: unknown, segments: string[]): unknown {
		if (Array.isArray(value)) return value.map((v) => this.expandPath(v, segments))
		if (segments.length === 0) {
			const found = typeof value === 'string' ? this.objects.get(value) : undefined
			return found ? structuredClone(found) : value
		}
		if (value && typeof value === 'object') {
			const [head = '', ...rest] = segments
			const copy = { ...(value as Record<string, unknown>) }
			if (head in copy) copy[head] = this.expandPath(copy[head], rest)
			return copy
		}
		return value
	}
}
