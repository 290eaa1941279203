// Response helpers shared by the fake's route files: Stripe-shaped errors and list paging.
import { str, type FormObject } from './form.js'
import { listObject, type StripeObject } from './objects.js'
import type { StripeStore } from './store.js'

export interface ApiContext {
	store: StripeStore
	/** Base URL of the fake, for hosted page URLs. */
	fakeUrl: string
	params: FormObject
	/** The mode of the request's key (sk_live_… / rk_live_…): customers and subscriptions are kept apart by it. */
	livemode: boolean
}

export interface ApiResult {
	status: number
	body: unknown
}

export type Route = [method: string, pattern: RegExp, handler: (ctx: ApiContext, id: string) => ApiResult]

export function ok(body: unknown): ApiResult {
	return { status: 200, body }
}

export function stripeError(status: number, message: string, extra: { code?: string; param?: string; type?: string } = {}): ApiResult {
	const { type = 'invalid_request_error', ...rest } = extra
	return {
		status,
		body: {
			error: {
				type,
				message,
				...rest,
				...(rest.code ? { doc_url: `https://docs.stripe.com/error-codes/${rest.code.replaceAll('_', '-')}` } : {}),
			},
		},
	}
}

export function missing(kind: string, id: string, param?: string): ApiResult {
	return stripeError(param ? 400 : 404, `No such ${kind}: '${id}'`, {
		code: 'resource_missing',
		param: param ?? 'id',
	})
}

export function required(param: string): ApiResult {
	return stripeError(400, `Missing required param: ${param}.`, { code: 'parameter_missing', param })
}

/** A list's or a search's `limit`: 10 unless given, 1 to 100, as Stripe takes it. */
export const listLimit = (ctx: ApiContext) => Math.min(Math.max(Number(str(ctx.params.limit) ?? 10) || 10, 1), 100)

/** Newest first, `limit` (default 10, max 100) and `starting_after` paging, like Stripe lists. */
export function page(ctx: ApiContext, url: string, items: StripeObject[]): ApiResult {
	const limit = listLimit(ctx)
	let sorted = [...items].reverse()
	const after = str(ctx.params.starting_after)
	// Older than the cursor, by when each was made: as Stripe pages on, also from a cursor the filter
	// no longer lists (a session expired between two pages), which restarting would page forever.
	if (after) {
		const madeAt = new Map([...ctx.store.objects.keys()].map((id, index) => [id, index]))
		const cursor = madeAt.get(after) ?? -1
		sorted = sorted.filter((o) => (madeAt.get(String(o.id)) ?? Infinity) < cursor)
	}
	const body = listObject(url, sorted.slice(0, limit))
	body.has_more = sorted.length > limit
	return ok(body)
}

export function getOr404(ctx: ApiContext, type: string, kind: string, id: string): ApiResult {
	const found = ctx.store.get(id, type)
	return found ? ok(found) : missing(kind, id)
}
