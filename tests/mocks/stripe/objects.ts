// Builders for Stripe objects in the shape of API version 2026-10-28.endive (only the fields an
// app plausibly reads, plus the ones the SDK's response coercion touches).
import { nowSeconds, randomId } from '../http-util.js'

export const STRIPE_API_VERSION = '2026-10-28.endive'

/** Any stored Stripe object. Kept loose: tests cast to `Stripe.X` types when they need them. */
export interface StripeObject {
	id: string
	object: string
	[field: string]: unknown
}

export type Interval = 'month' | 'year'
export type SubscriptionStatus = 'active' | 'canceled' | 'incomplete' | 'incomplete_expired' | 'past_due' | 'paused' | 'trialing' | 'unpaid'

export const PLANS = ['solo', 'team', 'studio', 'agency', 'network', 'broadcaster'] as const
export type PlanName = (typeof PLANS)[number]

/**
 * Monthly amounts in cents; a year costs ten months. Deliberately not the app's plan table: tests tell
 * what the processor bills (shown on /account) from what the app offers (/pricing) by these amounts.
 */
export const SEED_MONTHLY_CENTS: Record<PlanName, number> = {
	solo: 900,
	team: 2900,
	studio: 5900,
	agency: 9900,
	network: 19900,
	broadcaster: 49900,
}

export function stripeId(prefix: string): string {
	return `${prefix}_${prefix.startsWith('cs') ? 'test_' : ''}${randomId(prefix === 'cs' ? 58 : 24)}`
}

export function customerObject(fields: Partial<StripeObject>): StripeObject {
	return {
		id: stripeId('cus'),
		object: 'customer',
		address: null,
		balance: 0,
		created: nowSeconds(),
		currency: null,
		default_source: null,
		delinquent: false,
		description: null,
		email: null,
		invoice_prefix: randomId(8).toUpperCase(),
		invoice_settings: { custom_fields: null, default_payment_method: null, footer: null },
		livemode: false,
		metadata: {},
		name: null,
		phone: null,
		preferred_locales: [],
		shipping: null,
		tax_exempt: 'none',
		test_clock: null,
		...fields,
	}
}

export function productObject(fields: Partial<StripeObject>): StripeObject {
	const created = nowSeconds()
	return {
		id: stripeId('prod'),
		object: 'product',
		active: true,
		created,
		default_price: null,
		description: null,
		images: [],
		livemode: false,
		marketing_features: [],
		metadata: {},
		name: 'Product',
		package_dimensions: null,
		shippable: null,
		tax_code: null,
		type: 'service',
		updated: created,
		url: null,
		...fields,
	}
}

export function priceObject(fields: {
	product: string
	unit_amount: number
	currency?: string
	interval?: Interval | null
	lookup_key?: string | null
	metadata?: Record<string, string>
	nickname?: string | null
	active?: boolean
}): StripeObject {
	const interval = fields.interval ?? null
	return {
		id: stripeId('price'),
		object: 'price',
		active: fields.active ?? true,
		billing_scheme: 'per_unit',
		created: nowSeconds(),
		currency: fields.currency ?? 'usd',
		custom_unit_amount: null,
		livemode: false,
		lookup_key: fields.lookup_key ?? null,
		metadata: fields.metadata ?? {},
		nickname: fields.nickname ?? null,
		product: fields.product,
		recurring: interval
			? {
					interval,
					interval_count: 1,
					meter: null,
					trial_period_days: null,
					usage_type: 'licensed',
				}
			: null,
		tax_behavior: 'unspecified',
		tiers_mode: null,
		transform_quantity: null,
		type: interval ? 'recurring' : 'one_time',
		unit_amount: fields.unit_amount,
		// The SDK turns *_decimal strings into Decimal objects: must be a decimal string or null.
		unit_amount_decimal: String(fields.unit_amount),
	}
}

/** A customer-portal configuration. Only the Dashboard makes one the default (`is_default`), never the API. */
export function portalConfigurationObject(fields: Partial<StripeObject>): StripeObject {
	const created = nowSeconds()
	return {
		id: stripeId('bpc'),
		object: 'billing_portal.configuration',
		active: true,
		application: null,
		business_profile: { headline: null, privacy_policy_url: null, terms_of_service_url: null },
		created,
		default_return_url: null,
		features: {},
		is_default: false,
		livemode: false,
		login_page: { enabled: false, url: null },
		metadata: {},
		name: null,
		updated: created,
		...fields,
	}
}

/** The account's own default, as saved in the Dashboard: invoices and cards, but no plan switching. */
export function accountDefaultPortalConfiguration(): StripeObject {
	return portalConfigurationObject({
		is_default: true,
		features: {
			customer_update: { enabled: false, allowed_updates: [] },
			invoice_history: { enabled: true },
			payment_method_update: { enabled: true },
			subscription_cancel: { enabled: true, mode: 'immediately', proration_behavior: 'none' },
			subscription_update: { enabled: false, default_allowed_updates: [], products: [], proration_behavior: 'none' },
		},
	})
}

/** The legacy `plan` mirror Stripe still embeds in subscription items. */
function planFromPrice(price: StripeObject): StripeObject {
	const recurring = (price.recurring ?? {}) as { interval?: Interval }
	return {
		id: price.id,
		object: 'plan',
		active: price.active,
		amount: price.unit_amount,
		amount_decimal: price.unit_amount_decimal,
		billing_scheme: 'per_unit',
		created: price.created,
		currency: price.currency,
		interval: recurring.interval ?? 'month',
		interval_count: 1,
		livemode: false,
		metadata: {},
		meter: null,
		nickname: null,
		product: price.product,
		tiers_mode: null,
		transform_usage: null,
		trial_period_days: null,
		usage_type: 'licensed',
	}
}

/** One interval after `from` (calendar month/year, in UTC), in unix seconds. */
export function addInterval(from: number, interval: Interval): number {
	const d = new Date(from * 1000)
	if (interval === 'year') d.setUTCFullYear(d.getUTCFullYear() + 1)
	else d.setUTCMonth(d.getUTCMonth() + 1)
	return Math.floor(d.getTime() / 1000)
}

export interface SubscriptionInput {
	customer: string
	price: StripeObject
	status?: SubscriptionStatus
	metadata?: Record<string, string>
	trialEnd?: number | null
	periodStart?: number
	periodEnd?: number
}

/**
 * In this API version the billing period lives on each item (`items.data[i].current_period_end`),
 * not on the subscription.
 */
export function subscriptionObject(input: SubscriptionInput): StripeObject {
	const id = stripeId('sub')
	const now = nowSeconds()
	const interval = ((input.price.recurring ?? {}) as { interval?: Interval }).interval ?? 'month'
	const trialEnd = input.trialEnd ?? null
	const periodStart = input.periodStart ?? now
	const periodEnd = input.periodEnd ?? trialEnd ?? addInterval(periodStart, interval)
	const status = input.status ?? (trialEnd ? 'trialing' : 'active')
	const item: StripeObject = {
		id: stripeId('si'),
		object: 'subscription_item',
		billing_thresholds: null,
		created: now,
		current_period_end: periodEnd,
		current_period_start: periodStart,
		current_trial: null,
		discounts: [],
		metadata: {},
		plan: planFromPrice(input.price),
		price: structuredClone(input.price),
		quantity: 1,
		subscription: id,
		tax_rates: [],
	}
	return {
		id,
		object: 'subscription',
		application: null,
		application_fee_percent: null,
		automatic_tax: { disabled_reason: null, enabled: false, liability: null },
		billing_cycle_anchor: periodEnd,
		billing_cycle_anchor_config: null,
		billing_mode: { flexible: null, type: 'classic' },
		cancel_at: null,
		cancel_at_period_end: false,
		canceled_at: null,
		cancellation_details: { comment: null, feedback: null, reason: null },
		collection_method: 'charge_automatically',
		created: now,
		currency: input.price.currency,
		customer: input.customer,
		days_until_due: null,
		default_payment_method: null,
		default_source: null,
		description: null,
		discounts: [],
		ended_at: status === 'canceled' ? now : null,
		invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
		items: {
			object: 'list',
			data: [item],
			has_more: false,
			total_count: 1,
			url: `/v1/subscription_items?subscription=${id}`,
		},
		latest_invoice: null,
		livemode: false,
		metadata: input.metadata ?? {},
		next_pending_invoice_item_invoice: null,
		on_behalf_of: null,
		pause_collection: null,
		payment_settings: null,
		pending_invoice_item_interval: null,
		pending_setup_intent: null,
		pending_update: null,
		schedule: null,
		start_date: now,
		status,
		test_clock: null,
		transfer_data: null,
		trial_end: trialEnd,
		trial_settings: trialEnd ? { end_behavior: { missing_payment_method: 'create_invoice' } } : null,
		trial_start: trialEnd ? now : null,
	}
}

export interface StripeList {
	object: 'list'
	data: StripeObject[]
	has_more: boolean
	url: string
}

export function listObject(url: string, data: StripeObject[]): StripeList {
	return { object: 'list', data, has_more: false, url }
}
