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
		const result = handler(ctx, decodeURIComponent(match[1] ?? ''))
		const expand = list(ctx.params.expand).filter((p): p is string => typeof p === 'string')
		if (result.status < 300 && expand.length > 0) {
			return { status: result.status, body: ctx.store.expand(result.body, expand) }
		}
		// A copy, so later state changes never leak into an already-built response.
		return { status: result.status, body: structuredClone(result.body) }
	}
	return stripeError(
		404,
		`Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
	)
}
