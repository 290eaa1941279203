import { PassThrough } from 'node:stream'
import { createReadableStreamFromReadable, type EntryContext } from '@remix-run/node'
import { isRouteErrorResponse, RemixServer } from '@remix-run/react'
import { renderToPipeableStream } from 'react-dom/server'
import { wantsWholeDocument } from './utils/cacheable-pages.server.ts'
import { isRemixOriginRefusal, noteRemixOriginRefusal } from './utils/form-origin-note.server.ts'
import { NonceProvider } from './utils/nonce-provider.ts'

// The production server (server/) reaches start-up and shutdown through the build, so that the app
// and the server share one module graph (one database connection, one PGlite lock).
export { startServices, stopServices } from './utils/lifecycle.server.ts'
export { securityHeaders } from './utils/security-headers.server.ts'
export { crossSiteFormRefusal } from './utils/forms.server.ts'
export { isApiPath } from './utils/api-path.ts'
export { isCacheablePage, wantsWholeDocument } from './utils/cacheable-pages.server.ts'
export { unknownApiMethodResponse } from './utils/api-route.server.ts'
export { healthBody, HEALTH_HEADERS } from './utils/health.server.ts'
export { MAX_BODY_BYTES } from './utils/http.server.ts'
export { ReadyBodyRequest, ReadyTextResponse } from './utils/ready-bodies.server.ts'
export * as adminCommands from './modules/account-deletion/admin.server.ts'
export { syncBillingCatalog } from './modules/billing/catalog-sync.server.ts'
export { createStripeClient, secretKeyMode } from './utils/stripe.server.ts'
export { initEnv } from './utils/env.server.ts'

// Stock `remix-serve` (the benchmark's anchor) knows nothing of start-up: with CALLSHEET_AUTOSTART=1
// the build connects the database itself when it is imported. Our own server never sets it.
if (process.env.CALLSHEET_AUTOSTART === '1') {
	const { startServices } = await import('./utils/lifecycle.server.ts')
	await startServices({ projectRoot: process.cwd() })
}

const ABORT_DELAY = 5_000

export default function handleRequest(
	request: Request,
	responseStatusCode: number,
	responseHeaders: Headers,
	remixContext: EntryContext,
	loadContext: { cspNonce?: string },
) {
	const nonce = loadContext.cspNonce ?? ''
	// Bots and no-JS clients get the whole document at once; browsers get it streamed.
	const readyEvent = wantsWholeDocument(request.headers.get('user-agent')) ? 'onAllReady' : 'onShellReady'
	return new Promise<Response>((resolve, reject) => {
		let shellRendered = false
		const { pipe, abort } = renderToPipeableStream(
			<NonceProvider value={nonce}>
				<RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} nonce={nonce} />
			</NonceProvider>,
			{
				nonce,
				[readyEvent]() {
					shellRendered = true
					const body = new PassThrough()
					body.once('close', () => clearTimeout(abortTimer))
					responseHeaders.set('Content-Type', 'text/html; charset=utf-8')
					resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status: responseStatusCode }))
					pipe(body)
				},
				onShellError(error: unknown) {
					clearTimeout(abortTimer)
					reject(error)
				},
				onError(error: unknown) {
					responseStatusCode = 500
					if (shellRendered) console.error(error)
				},
			},
		)
		// Gives up on a render still streaming after ABORT_DELAY. Cleared once the page is sent: a pending
		// timer keeps the whole render (React's request, the loader data) reachable for 5 s after the
		// response, which at a few hundred pages a second filled the heap and kept the GC busy.
		// (React calls back asynchronously, like `pipe` above, so the callbacks can name it.)
		const abortTimer = setTimeout(abort, ABORT_DELAY)
	})
}

export function handleError(error: unknown, { request }: { request: Request }) {
	// A page that does not exist is the visitor's mistake (or a scanner's): the access log line has
	// it. Logging Remix's 404 with its stack for each would let anyone flood the error log.
	if (request.signal.aborted || (isRouteErrorResponse(error) && error.status < 500)) return
	if (isRemixOriginRefusal(error)) return noteRemixOriginRefusal(request)
	console.error(error)
}
