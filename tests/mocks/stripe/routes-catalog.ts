// Customers, products and prices.
import { nowSeconds } from '../http-util.js'
import { bool, int, list, mergeMetadata, obj, str, type FormObject } from './form.js'
import { priceObject, productObject, type Interval } from './objects.js'
import { getOr404, listLimit, missing, ok, page, required, stripeError, type ApiContext, type ApiResult, type Route } from './respond.js'

const ID = '([^/]+)'

/** Plain string fields copied from params when present. */
function pick(params: FormObject, fields: string[]): Record<string, string> {
	const out: Record<string, string> = {}
	for (const field of fields) {
		const value = str(params[field])
		if (value !== undefined) out[field] = value
	}
	return out
}

const CUSTOMER_FIELDS = ['email', 'name', 'description', 'phone']

function createCustomer(ctx: ApiContext): ApiResult {
	return ok(
		ctx.store.createCustomer({
			...pick(ctx.params, CUSTOMER_FIELDS),
			metadata: mergeMetadata({}, ctx.params.metadata),
		}),
	)
}

function updateCustomer(ctx: ApiContext, id: string): ApiResult {
	const customer = ctx.store.get(id, 'customer')
	if (!customer) return missing('customer', id)
	Object.assign(customer, pick(ctx.params, CUSTOMER_FIELDS), {
		metadata: mergeMetadata(customer.metadata as Record<string, string>, ctx.params.metadata),
	})
	return ok(customer)
}

function listCustomers(ctx: ApiContext): ApiResult {
	const email = str(ctx.params.email)
	// `created[gte]`, as Stripe filters a list by creation time (seconds).
	const since = int(obj(ctx.params.created)?.gte)
	const found = ctx.store
		.all('customer')
		.filter((c) => (!email || c.email === email) && (since === undefined || Number(c.created) >= since))
	return page(ctx, '/v1/customers', found)
}

/** Stripe's search over customers, for the one query form the app sends: `metadata['key']:'value'`. */
function searchCustomers(ctx: ApiContext): ApiResult {
	const query = str(ctx.params.query) ?? ''
	const match = /^metadata\['([^']+)'\]:'([^']*)'$/.exec(query)
	if (!match) return stripeError(400, `The stand-in cannot search for: ${query}`, { param: 'query' })
	const [, key, value] = match
	const found = ctx.store.all('customer').filter((c) => (c.metadata as Record<string, string>)?.[key!] === value)
	const limit = listLimit(ctx)
	return ok({
		object: 'search_result',
		url: '/v1/customers/search',
		data: [...found].reverse().slice(0, limit),
		has_more: found.length > limit,
		next_page: null,
	})
}

function createProduct(ctx: ApiContext): ApiResult {
	const name = str(ctx.params.name)
	if (!name) return required('name')
	// A product id of one's own must be new: Stripe refuses a second create with it.
	const id = str(ctx.params.id)
	if (id && ctx.store.get(id, 'product'))
		return stripeError(400, 'Product already exists.', { code: 'resource_already_exists', param: 'id' })
	return ok(
		ctx.store.put(
			productObject({
				...pick(ctx.params, ['id', 'description']),
				name,
				active: bool(ctx.params.active) ?? true,
				metadata: mergeMetadata({}, ctx.params.metadata),
			}),
		),
	)
}

function updateProduct(ctx: ApiContext, id: string): ApiResult {
	const product = ctx.store.get(id, 'product')
	if (!product) return missing('product', id)
	const active = bool(ctx.params.active)
	Object.assign(product, pick(ctx.params, ['name', 'description', 'default_price']), {
		...(active === undefined ? {} : { active }),
		metadata: mergeMetadata(product.metadata as Record<string, string>, ctx.params.metadata),
		updated: nowSeconds(),
	})
	return ok(product)
}

function listProducts(ctx: ApiContext): ApiResult {
	const active = bool(ctx.params.active)
	const found = ctx.store.all('product').filter((p) => active === undefined || p.active === active)
	return page(ctx, '/v1/products', found)
}

/** Lookup keys are unique: taking one from another price needs `transfer_lookup_key=true`. */
function createPrice(ctx: ApiContext): ApiResult {
	const { params, store } = ctx
	const currency = str(params.currency)
	if (!currency) return required('currency')
	let product = str(params.product)
	const productData = obj(params.product_data)
	if (product && !store.get(product, 'product')) return missing('product', product, 'product')
	if (!product && productData) {
		const name = str(productData.name)
		if (!name) return required('product_data[name]')
		product = store.put(productObject({ name })).id
	}
	if (!product) return required('product')
	const unitAmount = int(params.unit_amount)
	if (unitAmount === undefined) return required('unit_amount')
	const lookupKey = str(params.lookup_key)
	const holder = lookupKey ? store.priceByLookupKey(lookupKey) : undefined
	if (holder && bool(params.transfer_lookup_key) !== true) {
		return stripeError(
			400,
			`A price (\`${holder.id}\`) already uses that lookup key. To transfer the lookup key to this new price, set \`transfer_lookup_key=true\`.`,
			{ param: 'lookup_key' },
		)
	}
	if (holder) {
		holder.lookup_key = null
		store.priceChanged(holder)
	}
	const interval = str(obj(params.recurring)?.interval) as Interval | undefined
	return ok(
		store.put(
			priceObject({
				product,
				currency,
				unit_amount: unitAmount,
				interval: interval ?? null,
				lookup_key: lookupKey ?? null,
				nickname: str(params.nickname) ?? null,
				active: bool(params.active) ?? true,
				metadata: mergeMetadata({}, params.metadata),
			}),
		),
	)
}

function updatePrice(ctx: ApiContext, id: string): ApiResult {
	const price = ctx.store.get(id, 'price')
	if (!price) return missing('price', id)
	const active = bool(ctx.params.active)
	if (active !== undefined) price.active = active
	price.metadata = mergeMetadata(price.metadata as Record<string, string>, ctx.params.metadata)
	ctx.store.priceChanged(price)
	return ok(price)
}

// Whether Stripe's default (no `active` param) includes inactive prices is not verified here;
// this fake returns both, so an app that needs active prices must ask for them.
function listPrices(ctx: ApiContext): ApiResult {
	const keys = list(ctx.params.lookup_keys).filter((k): k is string => typeof k === 'string')
	const active = bool(ctx.params.active)
	const product = str(ctx.params.product)
	const found = ctx.store
		.all('price')
		.filter((p) => keys.length === 0 || keys.includes(String(p.lookup_key)))
		.filter((p) => active === undefined || p.active === active)
		.filter((p) => !product || p.product === product)
	return page(ctx, '/v1/prices', found)
}

export const catalogRoutes: Route[] = [
	['POST', /^\/v1\/customers$/, createCustomer],
	['GET', /^\/v1\/customers$/, listCustomers],
	['GET', /^\/v1\/customers\/search$/, searchCustomers],
	['GET', new RegExp(`^/v1/customers/${ID}$`), (ctx, id) => getOr404(ctx, 'customer', 'customer', id)],
	['POST', new RegExp(`^/v1/customers/${ID}$`), updateCustomer],
	['POST', /^\/v1\/products$/, createProduct],
	['GET', /^\/v1\/products$/, listProducts],
	['GET', new RegExp(`^/v1/products/${ID}$`), (ctx, id) => getOr404(ctx, 'product', 'product', id)],
	['POST', new RegExp(`^/v1/products/${ID}$`), updateProduct],
	['POST', /^\/v1\/prices$/, createPrice],
	['GET', /^\/v1\/prices$/, listPrices],
	['GET', new RegExp(`^/v1/prices/${ID}$`), (ctx, id) => getOr404(ctx, 'price', 'price', id)],
	['POST', new RegExp(`^/v1/prices/${ID}$`), updatePrice],
]
