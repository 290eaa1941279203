// Checkout sessions, subscriptions and the customer portal.
import { nowSeconds, randomId } from '../http-util.js'
import { bool, int, list, mergeMetadata, obj, str, type FormObject } from './form.js'
import { portalConfigurationObject, stripeId, type StripeObject, type SubscriptionStatus } from './objects.js'
import { getOr404, missing, ok, page, required, stripeError, type ApiContext, type ApiResult, type Route } from './respond.js'

const ID = '([^/]+)'
const PORTAL_CONFIGS = '/v1/billing_portal/configurations'

function createCheckoutSession(ctx: ApiContext): ApiResult {
	const { params, store } = ctx
	const mode = str(params.mode)
	if (!mode) return required('mode')
	const customer = str(params.customer)
	if (customer && !store.get(customer, 'customer')) return missing('customer', customer, 'customer')
	if (customer && str(params.customer_email)) {
		return stripeError(400, 'You may only specify one of these parameters: customer, customer_email.', {
			param: 'customer_email',
		})
	}
	const items = list(params.line_items).map((item) => obj(item) ?? {})
	let amount = 0
	let currency: unknown = str(params.currency) ?? null
	for (const [i, item] of items.entries()) {
		const priceId = str(item.price) ?? ''
		const price = store.get(priceId, 'price')
		if (!price) return missing('price', priceId, `line_items[${i}][price]`)
		// Stripe's answer for an archived price (a sync replaced it): no error code, only the param.
		if (price.active === false) {
			return stripeError(400, 'The price specified is inactive. This field only accepts active prices.', {
				param: `line_items[${i}][price]`,
			})
		}
		if (mode === 'subscription' && !price.recurring) {
			return stripeError(400, 'You must provide at least one recurring price in `subscription` mode when using prices.', {
				param: `line_items[${i}][price]`,
			})
		}
		amount += Number(price.unit_amount) * (int(item.quantity) ?? 1)
		currency = price.currency
	}
	if (mode === 'subscription' && items.length === 0) return required('line_items')
	const trial = int(obj(params.subscription_data)?.trial_period_days)
	const id = stripeId('cs')
	const created = nowSeconds()
	store.checkoutParams.set(id, structuredClone(params))
	return ok(
		store.put({
			id,
			object: 'checkout.session',
			amount_subtotal: amount,
			amount_total: trial ? 0 : amount,
			cancel_url: str(params.cancel_url) ?? null,
			client_reference_id: str(params.client_reference_id) ?? null,
			client_secret: null,
			created,
			currency,
			customer: customer ?? null,
			customer_details: null,
			customer_email: str(params.customer_email) ?? null,
			expires_at: created + 24 * 3600,
			invoice: null,
			livemode: false,
			locale: str(params.locale) ?? null,
			metadata: mergeMetadata({}, params.metadata),
			mode,
			payment_intent: null,
			payment_link: null,
			payment_method_types: ['card'],
			payment_status: 'unpaid',
			setup_intent: null,
			status: 'open',
			subscription: null,
			success_url: str(params.success_url) ?? null,
			ui_mode: 'hosted',
			url: `${ctx.fakeUrl}/checkout/${id}`,
		}),
	)
}

function listCheckoutSessions(ctx: ApiContext): ApiResult {
	const customer = str(ctx.params.customer)
	const subscription = str(ctx.params.subscription)
	const status = str(ctx.params.status)
	const found = ctx.store
		.all('checkout.session')
		.filter(
			(s) =>
				(!customer || s.customer === customer) && (!subscription || s.subscription === subscription) && (!status || s.status === status),
		)
	return page(ctx, '/v1/checkout/sessions', found)
}

/** Stripe expires an open session only: one paid (complete) or expired already is a 400. */
function expireCheckoutSession(ctx: ApiContext, id: string): ApiResult {
	const session = ctx.store.get(id, 'checkout.session')
	if (!session) return missing('checkout.session', id)
	if (session.status !== 'open') {
		return stripeError(
			400,
			`Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${String(session.status)}".`,
		)
	}
	Object.assign(session, { status: 'expired', url: null })
	return ok(session)
}

/** Stripe's default list leaves out canceled subscriptions; `status=all` includes them. */
function listSubscriptions(ctx: ApiContext): ApiResult {
	const customer = str(ctx.params.customer)
	const status = str(ctx.params.status)
	const price = str(ctx.params.price)
	const found = ctx.store.all('subscription').filter((s) => {
		if (customer && s.customer !== customer) return false
		if (price && !itemsOf(s).some((item) => (item.price as StripeObject).id === price)) return false
		if (status === 'all') return true
		return status ? s.status === status : s.status !== 'canceled'
	})
	return page(ctx, '/v1/subscriptions', found)
}

function itemsOf(subscription: StripeObject): StripeObject[] {
	return (subscription.items as { data: StripeObject[] }).data
}

/** Minimal update: metadata, cancel_at_period_end, and swapping an item's price. */
function updateSubscription(ctx: ApiContext, id: string): ApiResult {
	const { params, store } = ctx
	const sub = store.get(id, 'subscription')
	if (!sub) return missing('subscription', id)
	if (sub.status === 'canceled') {
		return stripeError(400, 'A canceled subscription can only update its cancellation_details and metadata.')
	}
	if (params.trial_end !== undefined) {
		// The fake knows only `now`: the trial ends and billing starts (payment succeeds here).
		if (str(params.trial_end) !== 'now') return stripeError(400, 'The fake processor supports trial_end=now only.', { param: 'trial_end' })
		if (sub.status === 'trialing') {
			sub.trial_end = nowSeconds()
			ctx.store.setSubscriptionStatus(id, 'active')
		}
	}
	sub.metadata = mergeMetadata(sub.metadata as Record<string, string>, params.metadata)
	const cancelAtEnd = bool(params.cancel_at_period_end)
	if (cancelAtEnd !== undefined) {
		sub.cancel_at_period_end = cancelAtEnd
		const firstItem = itemsOf(sub)[0]
		sub.cancel_at = cancelAtEnd && firstItem ? firstItem.current_period_end : null
	}
	for (const change of list(params.items).map((i) => obj(i) ?? ({} as FormObject))) {
		const priceId = str(change.price)
		if (!priceId) continue
		const price = store.get(priceId, 'price')
		if (!price) return missing('price', priceId, 'items[0][price]')
		const item = itemsOf(sub).find((i) => i.id === str(change.id)) ?? itemsOf(sub)[0]
		if (item) item.price = structuredClone(price)
	}
	return ok(sub)
}

function cancelSubscription(ctx: ApiContext, id: string): ApiResult {
	const sub = ctx.store.get(id, 'subscription')
	// Stripe answers a second cancel as if the subscription did not exist.
	if (!sub || sub.status === 'canceled') return missing('subscription', id)
	return ok(ctx.store.setSubscriptionStatus(id, 'canceled' satisfies SubscriptionStatus))
}

/** Stripe makes no configuration created through the API the default: only the Dashboard can. */
function createPortalConfiguration(ctx: ApiContext): ApiResult {
	const { params } = ctx
	const businessProfile = obj(params.business_profile)
	return ok(
		ctx.store.put(
			portalConfigurationObject({
				...(businessProfile ? { business_profile: businessProfile } : {}),
				default_return_url: str(params.default_return_url) ?? null,
				features: obj(params.features) ?? {},
				metadata: mergeMetadata({}, params.metadata),
				name: str(params.name) ?? null,
			}),
		),
	)
}

function listPortalConfigurations(ctx: ApiContext): ApiResult {
	const active = bool(ctx.params.active)
	const isDefault = bool(ctx.params.is_default)
	const found = ctx.store
		.all('billing_portal.configuration')
		.filter((c) => (active === undefined || c.active === active) && (isDefault === undefined || c.is_default === isDefault))
	return page(ctx, PORTAL_CONFIGS, found)
}

/** A session opens on the configuration it names, else on the account's default; it says which. */
function createPortalSession(ctx: ApiContext): ApiResult {
	const { params, store } = ctx
	const customer = str(params.customer)
	if (!customer) return required('customer')
	if (!store.get(customer, 'customer')) return missing('customer', customer, 'customer')
	const configId = str(params.configuration)
	const config = configId
		? store.get(configId, 'billing_portal.configuration')
		: store.all('billing_portal.configuration').find((c) => c.is_default)
	if (configId && !config) return missing('configuration', configId, 'configuration')
	// Only an active configuration "can be used to create portal sessions" (BillingPortal.Configuration.active).
	if (configId && config && config.active === false) {
		return stripeError(400, `The configuration '${configId}' is not active; activate it before creating portal sessions with it.`, {
			param: 'configuration',
		})
	}
	if (!config) {
		return stripeError(
			400,
			"You can't create a portal session in test mode until you save your customer portal settings in test mode at https://dashboard.stripe.com/test/settings/billing/portal.",
		)
	}
	const id = `bps_${randomId(24)}`
	return ok(
		store.put({
			id,
			object: 'billing_portal.session',
			configuration: config.id,
			created: nowSeconds(),
			customer,
			customer_account: null,
			flow: null,
			livemode: false,
			locale: null,
			on_behalf_of: null,
			return_url: str(params.return_url) ?? null,
			url: `${ctx.fakeUrl}/portal/${id}`,
		}),
	)
}

function updatePortalConfiguration(ctx: ApiContext, id: string): ApiResult {
	const config = ctx.store.get(id, 'billing_portal.configuration')
	if (!config) return missing('configuration', id)
	const active = bool(ctx.params.active)
	Object.assign(config, {
		...(active === undefined ? {} : { active }),
		...(obj(ctx.params.features) ? { features: obj(ctx.params.features) } : {}),
		...(str(ctx.params.default_return_url) ? { default_return_url: str(ctx.params.default_return_url) } : {}),
		metadata: mergeMetadata(config.metadata as Record<string, string>, ctx.params.metadata),
		updated: nowSeconds(),
	})
	return ok(config)
}

export const billingRoutes: Route[] = [
	['POST', /^\/v1\/checkout\/sessions$/, createCheckoutSession],
	['GET', /^\/v1\/checkout\/sessions$/, listCheckoutSessions],
	['GET', new RegExp(`^/v1/checkout/sessions/${ID}$`), (ctx, id) => getOr404(ctx, 'checkout.session', 'checkout.session', id)],
	['POST', new RegExp(`^/v1/checkout/sessions/${ID}/expire$`), expireCheckoutSession],
	['GET', /^\/v1\/subscriptions$/, listSubscriptions],
	['GET', new RegExp(`^/v1/subscriptions/${ID}$`), (ctx, id) => getOr404(ctx, 'subscription', 'subscription', id)],
	['POST', new RegExp(`^/v1/subscriptions/${ID}$`), updateSubscription],
	['DELETE', new RegExp(`^/v1/subscriptions/${ID}$`), cancelSubscription],
	['GET', new RegExp(`^/v1/invoices/${ID}$`), (ctx, id) => getOr404(ctx, 'invoice', 'invoice', id)],
	['POST', /^\/v1\/billing_portal\/sessions$/, createPortalSession],
	['GET', new RegExp(`^${PORTAL_CONFIGS}$`), listPortalConfigurations],
	['POST', new RegExp(`^${PORTAL_CONFIGS}$`), createPortalConfiguration],
	['GET', new RegExp(`^${PORTAL_CONFIGS}/${ID}$`), (ctx, id) => getOr404(ctx, 'billing_portal.configuration', 'configuration', id)],
	['POST', new RegExp(`^${PORTAL_CONFIGS}/${ID}$`), updatePortalConfiguration],
]
