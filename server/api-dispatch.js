// The JSON endpoints are Remix resource routes (app/routes/api.*). For those with a fixed path the
// server calls the route module's loader or action itself, skipping Remix's request handler: it
// re-flattens and re-ranks the whole route tree on every request, which measured as the largest
// cost outside our own code on the API (docs/decisions/0010-direct-api-dispatch-and-memory-limits.md). The route
// modules are the same ones Remix would call, with the same arguments; anything not matched here
// (dynamic paths, the /api/* catch-all, other methods) still goes through Remix.

const LOADER_METHODS = new Set(['GET', 'HEAD'])
const ACTION_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** pathname (lower case, no trailing slash) → route module, for every fixed-path `/api/` route. */
function fixedApiRoutes(build) {
	const byPath = new Map()
	for (const route of Object.values(build.routes)) {
		const routePath = route.path
		if (!routePath || !route.id.startsWith('routes/api.') || route.parentId !== 'root') continue
		// Dynamic, splat and optional segments are Remix's business.
		if (/[:*?]/.test(routePath)) continue
		const { loader, action } = route.module
		if (typeof loader !== 'function' || typeof action !== 'function') continue
		byPath.set(`/${routePath.toLowerCase()}`, route.module)
	}
	return byPath
}

/**
 * Returns `(method, pathname) => handler | undefined`; a handler takes `(request, context)` and
 * returns the route's Response. Remix matches paths case-insensitively and ignores one trailing
 * slash: so does this.
 */
export function createApiDispatch(build) {
	const routes = fixedApiRoutes(build)
	const routeAt = (pathname) => {
		const key = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname
		return routes.get(key.toLowerCase())
	}
	const dispatch = (method, pathname) => {
		const isLoader = LOADER_METHODS.has(method)
		if (!isLoader && !ACTION_METHODS.has(method)) return undefined
		const module = routeAt(pathname)
		if (!module) return undefined
		const handler = isLoader ? module.loader : module.action
		return (request, context) => handler({ request, params: {}, context })
	}
	/** The route's Allow list (app/utils/api-route.server.ts), or undefined when no fixed route is there. */
	dispatch.allowFor = (pathname) => routeAt(pathname)?.action.allow
	return dispatch
}
