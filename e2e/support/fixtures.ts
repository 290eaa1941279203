// Shared fixtures for the browser journeys. Import `test` and `expect` from here, not from
// @playwright/test, so every page gets the app's base URL and the outside-world block.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import AxeBuilder from '@axe-core/playwright'
import { test as base, expect, type BrowserContext, type ConsoleMessage, type Page } from '@playwright/test'
import { mintSessionToken, type SessionToken } from './clerk-session.ts'
import { chromiumAvailable, CHROMIUM_MISSING_MESSAGE, e2eBaseUrl } from './env.ts'

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
}

export const test = base.extend<Fixtures>({
	// The global setup picks the port at run time, so the config cannot know the base URL.
	baseURL: async ({}, use) => {
		await use(e2eBaseUrl())
	},

	// Pages never wait on the outside world: Clerk's script host, CDNs, fonts… are aborted at once.
	context: async ({ context, baseURL }, use) => {
		const appOrigin = new URL(baseURL ?? e2eBaseUrl()).origin
		await context.route(
			(url) => (url.protocol === 'http:' || url.protocol === 'https:') && url.origin !== appOrigin,
			(route) => route.abort('blockedbyclient'),
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
	const violations = opts.javaScriptEnabled === false ? await axeOnNoJavaScriptReplica(page, opts.exclude ?? []) : await axeViaBuilder(page, opts.exclude ?? [])
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
 * Runtime.evaluate gets no timers (axe needs them). So axe runs on a replica: the same URL and
 * cookies in a fresh JavaScript-enabled context whose document is served without its <script>
 * elements and with its <noscript> wrappers removed (their content shown, as a no-JS browser does).
 */
async function axeOnNoJavaScriptReplica(page: Page, exclude: string[]): Promise<AxeViolation[]> {
	const source = page.context()
	const browser = source.browser()
	if (!browser) throw new Error('axe without JavaScript needs a page from a launched browser')
	const url = page.url()
	const appOrigin = new URL(url).origin
	const replica = await browser.newContext({ viewport: page.viewportSize(), javaScriptEnabled: true })
	try {
		await replica.addCookies(await source.cookies())
		await replica.route('**/*', async (route) => {
			const request = route.request()
			if (new URL(request.url()).origin !== appOrigin || request.resourceType() === 'script') {
				return route.abort('blockedbyclient')
			}
			if (request.resourceType() !== 'document') return route.continue()
			const response = await route.fetch()
			const html = (await response.text())
				.replace(/<script\b[\s\S]*?<\/script\s*>/gi, '')
				.replace(/<\/?noscript\b[^>]*>/gi, '')
			return route.fulfill({ response, body: html })
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
		await page.screenshot({ path: file, fullPage: true })
		files.push(file)
	}
	if (original) await page.setViewportSize(original)
	return files
}

/** Call at the top of a describe whose tests need a browser. */
export function skipWithoutBrowser(): void {
	test.skip(!chromiumAvailable, CHROMIUM_MISSING_MESSAGE)
}
