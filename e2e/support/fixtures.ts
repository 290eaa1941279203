// Shared fixtures for the browser journeys. Import `test` and `expect` from here, not from
// @playwright/test, so every page gets the app's base URL and the outside-world block.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import AxeBuilder from '@axe-core/playwright'
import { test as base, expect, type BrowserContext, type ConsoleMessage, type Page } from '@playwright/test'
import { mintSessionToken, type SessionToken } from './clerk-session.ts'
import { chromiumAvailable, CHROMIUM_MISSING_MESSAGE, e2eBaseUrl, e2eStripeOrigin } from './env.ts'

export { E2E_ADMIN_USER_ID } from './env.ts'

export { expect }

/** Clerk's frontend API host (from the test publishable key). It does not exist: every request to it is aborted. */
export const CLERK_FRONTEND_HOST = 'clerk.example.test'

export interface CollectedConsoleError {
	kind: 'console' | 'pageerror'
	text: string
	/** Where the message came from (console location, or the failed resource's URL). */
	url: string
}

interface Fixtures {
	/** Every console 'error' message and uncaught page error of the test's pages, in order. */
	consoleErrors: CollectedConsoleError[]
	/**
	 * Console errors the test causes on purpose (a form refused with a 400, a 404 page): push patterns,
	 * each matched against "<text> (at <url>)".
	 */
	expectedConsoleErrors: RegExp[]
	/** Runs after every test: its pages logged no console error it did not expect. */
	noUnexpectedConsoleErrors: void
}

export const test = base.extend<Fixtures>({
	// The global setup picks the port at run time, so the config cannot know the base URL.
	baseURL: async ({}, use) => {
		await use(e2eBaseUrl())
	},

	// Pages never wait on the outside world: Clerk's script host, CDNs, fonts… are aborted at once.
	// The app and the fake Stripe's hosted pages (Checkout, portal) are the only origins let through.
	context: async ({ context, baseURL }, use) => {
		const stripeOrigin = e2eStripeOrigin()
		const appOrigin = new URL(baseURL ?? e2eBaseUrl()).origin
		const allowed = new Set([appOrigin, stripeOrigin])
		await context.route(
			(url) => (url.protocol === 'http:' || url.protocol === 'https:') && !allowed.has(url.origin),
			(route) => route.abort('blockedbyclient'),
		)
		// A signed-in document request whose Referer is another origin makes Clerk (production
		// instance, @clerk/backend 2.x: "primary-domain-cross-origin-sync") answer with a 307
		// handshake through its frontend API. For real that is one more redirect on the way back from
		// Stripe; here that host does not exist and the browser ends on an error page. So navigations
		// from the fake Stripe reach the app without a Referer, as from a no-referrer site:
		// - the fake's documents and redirects get `Referrer-Policy: no-referrer` (the 303 after Pay
		//   is followed by the browser itself, so only the policy on it can drop the Referer);
		// - a navigation to the app that still carries the fake's origin as Referer (a link on a fake
		//   page the browser reached through a redirect, which routes never see) is fetched from here
		//   without it: Chromium ignores a changed Referer in route.continue/fallback.
		await context.route(
			(url) => url.origin === stripeOrigin,
			async (route) => {
				if (route.request().resourceType() !== 'document') return route.fallback()
				const response = await route.fetch({ maxRedirects: 0 })
				return route.fulfill({ response, headers: { ...response.headers(), 'referrer-policy': 'no-referrer' } })
			},
		)
		await context.route(
			(url) => url.origin === appOrigin,
			async (route) => {
				const request = route.request()
				if (request.resourceType() !== 'document') return route.fallback()
				const { referer, ...headers } = await request.allHeaders()
				if (!referer || !URL.canParse(referer) || new URL(referer).origin !== stripeOrigin) return route.fallback()
				const response = await route.fetch({ headers, maxRedirects: 0 })
				return route.fulfill({ response })
			},
		)
		await use(context)
	},

	consoleErrors: async ({ context }, use) => {
		const errors: CollectedConsoleError[] = []
		const watch = (page: Page) => {
			page.on('console', (message: ConsoleMessage) => {
				if (message.type() === 'error') {
					errors.push({ kind: 'console', text: message.text(), url: message.location().url })
				}
			})
			page.on('pageerror', (error) => {
				errors.push({ kind: 'pageerror', text: `${error.name}: ${error.message}`, url: '' })
			})
		}
		context.pages().forEach(watch)
		context.on('page', watch)
		await use(errors)
	},

	expectedConsoleErrors: async ({}, use) => {
		await use([])
	},

	// The house rule that a console error fails a test, for every journey and with JavaScript off too
	// (the browser logs a document answered 4xx/5xx): a hydration error or a CSP violation on a page no
	// step looks at still fails the test that opened it. Clerk's script failing to load is this
	// environment's doing (its host is unreachable on purpose), and comes whenever a journey runs long.
	noUnexpectedConsoleErrors: [
		async ({ consoleErrors, expectedConsoleErrors }, use) => {
			await use()
			expectNoUnexpectedConsoleErrors(consoleErrors, { allow: [CLERK_LOAD_FAILURE, ...expectedConsoleErrors] })
		},
		{ auto: true },
	],
})

/**
 * The errors left once failed loads of clerk.example.test resources (which we abort on purpose)
 * are removed. Anything else is a finding: CSP violations, hydration errors, 500s…
 */
export function unexpectedConsoleErrors(errors: CollectedConsoleError[]): CollectedConsoleError[] {
	return errors.filter((error) => {
		const failedLoad = error.kind === 'console' && /^Failed to load resource\b/.test(error.text)
		const fromClerkHost = (() => {
			try {
				return new URL(error.url).hostname === CLERK_FRONTEND_HOST
			} catch {
				return false
			}
		})()
		return !(failedLoad && fromClerkHost)
	})
}

export function formatConsoleErrors(errors: CollectedConsoleError[]): string {
	return errors.map((e) => `- [${e.kind}] ${e.text}${e.url ? ` (at ${e.url})` : ''}`).join('\n')
}

/**
 * Signs `userId` in: mints a Clerk session token the server verifies networklessly and sets the
 * `__session` and `__client_uat` cookies for the app's host. Call it before navigating.
 */
export async function signIn(
	target: Page | BrowserContext,
	userId: string,
	opts: { claims?: Record<string, unknown> } = {},
): Promise<SessionToken> {
	const context = 'goto' in target ? target.context() : target
	const baseURL = e2eBaseUrl()
	const session = mintSessionToken(userId, { azp: new URL(baseURL).origin, ...opts.claims })
	await context.addCookies([
		{ name: '__session', value: session.token, url: baseURL, sameSite: 'Lax' },
		{ name: '__client_uat', value: String(session.iat), url: baseURL, sameSite: 'Lax' },
	])
	return session
}

/**
 * Runs axe on the page and fails listing every 'serious' or 'critical' violation.
 *
 * Pass `javaScriptEnabled: false` from a `test.use({ javaScriptEnabled: false })` test: axe cannot
 * run in such a page, so it runs on a script-free replica of it (see axeOnNoJavaScriptReplica).
 */
export async function expectNoSeriousA11yViolations(
	page: Page,
	opts: { exclude?: string[]; javaScriptEnabled?: boolean } = {},
): Promise<void> {
	const violations =
		opts.javaScriptEnabled === false
			? await axeOnNoJavaScriptReplica(page, opts.exclude ?? [])
			: await axeViaBuilder(page, opts.exclude ?? [])
	const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
	const report = serious
		.map((v) => {
			const nodes = v.nodes
				.slice(0, 5)
				.map((n) => `    at ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ').trim()}`)
				.join('\n')
			const more = v.nodes.length > 5 ? `\n    … and ${v.nodes.length - 5} more` : ''
			return `[${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})\n${nodes}${more}`
		})
		.join('\n')
	expect(serious, `serious/critical accessibility violations on ${page.url()}:\n${report}`).toEqual([])
}

type AxeViolation = Awaited<ReturnType<AxeBuilder['analyze']>>['violations'][number]

async function axeViaBuilder(page: Page, exclude: string[]): Promise<AxeViolation[]> {
	let builder = new AxeBuilder({ page })
	for (const selector of exclude) builder = builder.exclude(selector)
	return (await builder.analyze()).violations
}

/**
 * Chromium with JavaScript off runs no page script at all: page.evaluate (hence AxeBuilder) hangs
 * because the page's script context is never created, and even the DevTools protocol's
 * Runtime.evaluate gets no timers (axe needs them). So axe runs on a replica: a fresh
 * JavaScript-enabled context with the same URL and cookies, whose document is the page's current
 * DOM (page.content() works without JavaScript) without its <script> elements and with its
 * <noscript> wrappers removed (their content shown, as a no-JS browser does). Serving the live DOM
 * rather than fetching the URL again keeps what a POST answered (a form with its errors, say).
 */
async function axeOnNoJavaScriptReplica(page: Page, exclude: string[]): Promise<AxeViolation[]> {
	const source = page.context()
	const browser = source.browser()
	if (!browser) throw new Error('axe without JavaScript needs a page from a launched browser')
	const url = page.url()
	const appOrigin = new URL(url).origin
	const html = (await page.content()).replace(/<script\b[\s\S]*?<\/script\s*>/gi, '').replace(/<\/?noscript\b[^>]*>/gi, '')
	const replica = await browser.newContext({ viewport: page.viewportSize(), javaScriptEnabled: true })
	try {
		await replica.addCookies(await source.cookies())
		await replica.route('**/*', async (route) => {
			const request = route.request()
			if (new URL(request.url()).origin !== appOrigin || request.resourceType() === 'script') {
				return route.abort('blockedbyclient')
			}
			if (request.resourceType() !== 'document') return route.continue()
			return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html })
		})
		const replicaPage = await replica.newPage()
		await replicaPage.goto(url)
		return await axeViaBuilder(replicaPage, exclude)
	} finally {
		await replica.close()
	}
}

export const VIEWPORTS = {
	phone: { width: 390, height: 844 },
	desktop: { width: 1280, height: 800 },
} as const

const screenshotDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'screenshots')

/** Full-page screenshots at each viewport, saved as e2e/screenshots/<name>-<viewport>.png (gitignored). */
export async function screenshotAtViewports(page: Page, name: string): Promise<string[]> {
	const original = page.viewportSize()
	const files: string[] = []
	for (const [label, size] of Object.entries(VIEWPORTS)) {
		await page.setViewportSize(size)
		// Let layout settle after the resize (works with JavaScript disabled too).
		await page.waitForTimeout(100)
		const file = path.join(screenshotDir, `${name}-${label}.png`)
		const png = await page.screenshot({ path: file, fullPage: true })
		files.push(file)
		// A full-page shot wider than the viewport means the page scrolls sideways: say so loudly
		// (in the report and on the console) without failing the journey over a layout finding.
		const width = png.readUInt32BE(16)
		if (width > size.width) {
			const description = `${path.basename(file)} is ${width} px wide at a ${size.width} px viewport: the page overflows horizontally (${page.url()})`
			test.info().annotations.push({ type: 'layout warning', description })
			console.warn(`[e2e] layout warning: ${description}`)
		}
	}
	if (original) await page.setViewportSize(original)
	return files
}

/** Call at the top of a describe whose tests need a browser. */
export function skipWithoutBrowser(): void {
	test.skip(!chromiumAvailable, CHROMIUM_MISSING_MESSAGE)
}

/** Gives the client a moment to hydrate and report problems (hydration errors, CSP, failed loads). */
export async function settle(page: Page): Promise<void> {
	await page.waitForLoadState('load')
	await page.waitForLoadState('networkidle')
}

/**
 * Runs `act` (a click that submits a form with JavaScript) while POSTs to `pathname` (the page, or its
 * `.data` request) are held, so `whilePending` sees the form's pending state; then lets them through.
 */
export async function whilePostHeld(page: Page, pathname: string, act: () => Promise<void>, whilePending: () => Promise<void>) {
	let release = () => {}
	const held = new Promise<void>((resolve) => (release = resolve))
	await page.route(
		(url) => url.pathname === pathname || url.pathname.startsWith(`${pathname}.`),
		async (route) => {
			if (route.request().method() === 'POST') await held
			await route.fallback()
		},
	)
	try {
		await act()
		await whilePending()
	} finally {
		release()
	}
}

/**
 * clerk-js never loads here (its host is unreachable on purpose). After its retries (~7 s on a page)
 * @clerk/clerk-react gives up with an uncaught "Failed to load Clerk" error (code
 * failed_to_load_clerk_js, later failed_to_load_clerk_js_timeout). It says nothing about the app
 * under test, but a long journey lives long enough to see it: pass this in `allow` there.
 */
export const CLERK_LOAD_FAILURE = /Clerk: Failed to load Clerk\b/

/**
 * The console error a browser logs when `path` (any query) answers `status`: the 400 of a refused
 * form, a 404 page. For `expectedConsoleErrors`.
 */
export function failedLoad(status: number, path: string): RegExp {
	const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
	return new RegExp(
		`^Failed to load resource: the server responded with a status of ${status} \\([^)]*\\) \\(at https?://[^/]+${escaped}(\\?[^)]*)?\\)$`,
	)
}

/**
 * Fails on console errors other than the aborted clerk.example.test loads. `allow` lists further
 * expected ones, each matched against "<text> (at <url>)" — e.g. the 400 a form answers on purpose.
 */
export function expectNoUnexpectedConsoleErrors(errors: CollectedConsoleError[], opts: { allow?: RegExp[] } = {}): void {
	const allow = opts.allow ?? []
	const unexpected = unexpectedConsoleErrors(errors).filter((e) => !allow.some((pattern) => pattern.test(`${e.text} (at ${e.url})`)))
	expect(unexpected, `unexpected console errors:\n${formatConsoleErrors(unexpected)}`).toEqual([])
}

/** An id no other test (nor an earlier run against the same stand-ins) uses, e.g. user_e2e_billing_js_k3x9q2. */
export function uniqueId(prefix: string): string {
	return `${prefix}_${Math.random().toString(36).slice(2, 8)}`
}
