// Routing for the fake's /v1 API: a table of [method, path pattern, handler], plus `expand[]`.
import { list } from './form.js'
import { stripeError, type ApiContext, type ApiResult, type Route } from './respond.js'
import { billingRoutes } from './routes-billing.js'
import { catalogRoutes } from './routes-catalog.js'
import { refuseUnknownParams } from './known-params.js'

const routes: Route[] = [...catalogRoutes, ...billingRoutes]

export function handleApi(ctx: ApiContext, method: string, path: string): ApiResult {
	for (const [routeMethod, pattern, handler] of routes) {
		if (routeMethod !== method) continue
		const match = pattern.exec(path)
		if (!match) continue
		const refused = refuseUnknownParams(method, path, ctx.params)
		if (refused) return refused
		// The handlers are synchronous: the store reads and writes in the request's mode until they return.
		ctx.store.requestLivemode = ctx.livemode
		try {
			const result = saysOtherMode(ctx, handler(ctx, decodeURIComponent(match[1] ?? '')))
			const expand = list(ctx.params.expand).filter((p): p is string => typeof p === 'string')
			if (result.status < 300 && expand.length > 0) {
				return { status: result.status, body: ctx.store.expand(result.body, expand) }
			}
			// A copy, so later state changes never leak into an already-built response.
			return { status: result.status, body: structuredClone(result.body) }
		} finally {
			ctx.store.requestLivemode = undefined
		}
	}
	return stripeError(
		404,
		`Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
	)
}

/**
 * Stripe's 404 for an object of the other mode says so: "No such customer: 'cus_…'; a similar object
 * exists in live mode, but a test mode key was used to make this request."
 */
function saysOtherMode(ctx: ApiContext, result: ApiResult): ApiResult {
	const error = (result.body as { error?: { code?: string; message?: string } }).error
	if (error?.code !== 'resource_missing' || !error.message) return result
	const id = /^No such \w+: '([^']+)'$/.exec(error.message)?.[1]
	const other = id === undefined ? undefined : ctx.store.objects.get(id)
	if (!other || other.livemode === ctx.livemode) return result
	const mode = (live: unknown) => (live ? 'live' : 'test')
	error.message += `; a similar object exists in ${mode(other.livemode)} mode, but a ${mode(ctx.livemode)} mode key was used to make this request.`
	return result
}
