import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node'
import { isSameOrigin } from './forms.server.ts'
import { BodyCutOffError, errorResponse, UnacceptedBodyError, type ErrorCode } from './http.server.ts'
import { ReadyTextResponse } from './ready-bodies.server.ts'

type Handler = (args: ActionFunctionArgs | LoaderFunctionArgs) => Promise<Response> | Response
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/**
 * Turns a map of method → handler into Remix's loader and action, so that every /api/* route answers
 * JSON for wrong methods (405 with Allow) and for unexpected errors (500 `failureCode`, logged, with no
 * stack trace in the body).
 */
export function apiRoute(handlers: Partial<Record<Method, Handler>>, { failureCode = 'server-error' }: { failureCode?: ErrorCode } = {}) {
	const allowed = Object.keys(handlers) as Method[]
	if (allowed.includes('GET')) allowed.push('HEAD' as Method)
	const allow = allowed.join(', ')

	const dispatch = async (args: ActionFunctionArgs | LoaderFunctionArgs) => {
		const method = (args.request.method === 'HEAD' ? 'GET' : args.request.method) as Method
		const handler = handlers[method]
		if (!handler) return errorResponse('method-not-allowed', { headers: { Allow: allow } })
		if (isCrossSiteWriteWithSession(args.request)) return errorResponse('forbidden')
		try {
			return await handler(args)
		} catch (error) {
			// Thrown answers (errorResponse) are ReadyTextResponses. Stock remix-serve replaces the global
			// Response after importing the build, so the class our responses extend is no longer that global.
			if (error instanceof Response || error instanceof ReadyTextResponse) return error
			// The client's doing, not a failure of ours: no log line beyond the request's own.
			if (error instanceof BodyCutOffError || error instanceof UnacceptedBodyError)
				return errorResponse('bad-body', { detail: error.message })
			const where = `${args.request.method} ${new URL(args.request.url).pathname}`
			// A fault in our code gets its stack. A service we depend on failing (the database down or not
			// answering) is already answered by code; a stack per request would bury the log during an outage.
			if (isProgrammingError(error)) console.error(`${where} failed:`, error)
			else console.error(`${where} failed: ${describe(error)}`)
			return errorResponse(failureCode)
		}
	}
	// The server reads `allow` to answer methods a Fetch Request cannot carry (TRACE, PROPFIND, …) with the
	// same 405 and Allow, without calling the route (server/app-server.js).
	const handler = Object.assign(dispatch, { allow })
	return { loader: handler, action: handler }
}

/** The answer to any request on `/api/*` whose method the API does not know (TRACE, PROPFIND, …). */
export function unknownApiMethodResponse(allow: string | undefined): Response {
	return allow === undefined ? errorResponse('not-found') : errorResponse('method-not-allowed', { headers: { Allow: allow } })
}

/**
 * A write that a browser sent from another site with the user's session cookie (docs/decisions/0007).
 * JSON writes are safe without this (a form cannot send `application/json`), but the portal reads no
 * body: a form on another site (a same-site subdomain gets the Lax cookie) could open portal sessions
 * in the user's name. Clients that are not browsers send neither Origin nor Sec-Fetch-Site.
 */
function isCrossSiteWriteWithSession(request: Request) {
	if (request.method === 'GET' || request.method === 'HEAD') return false
	return request.headers.get('Cookie')?.includes('__session') === true && !isSameOrigin(request)
}

function isProgrammingError(error: unknown) {
	return error instanceof TypeError || error instanceof ReferenceError || error instanceof SyntaxError || error instanceof RangeError
}

function describe(error: unknown) {
	if (!(error instanceof Error)) return String(error)
	const code = (error as { code?: unknown }).code
	return `${error.name}: ${error.message}${typeof code === 'string' ? ` (${code})` : ''}`
}
