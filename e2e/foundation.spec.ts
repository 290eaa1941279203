// Foundation journeys: the home page (with and without JavaScript), the health endpoint, a
// signed-in visitor, and the sign-in page when Clerk's browser script cannot load.
import {
	expect,
	expectNoSeriousA11yViolations,
	formatConsoleErrors,
	screenshotAtViewports,
	signIn,
	skipWithoutBrowser,
	test,
	unexpectedConsoleErrors,
	type CollectedConsoleError,
} from './support/fixtures.ts'
import type { Page } from '@playwright/test'

const HOME_HEADING = 'Pre-production, on one call sheet.'

async function expectMainNav(page: Page, account: 'signed-out' | 'signed-in') {
	const nav = page.getByRole('navigation', { name: 'Main' })
	await expect(nav.getByRole('link', { name: 'Pricing', exact: true })).toBeVisible()
	await expect(nav.getByRole('link', { name: 'Contact', exact: true })).toBeVisible()
	const shown = account === 'signed-in' ? 'Account' : 'Sign in'
	const hidden = account === 'signed-in' ? 'Sign in' : 'Account'
	await expect(nav.getByRole('link', { name: shown, exact: true })).toBeVisible()
	await expect(nav.getByRole('link', { name: hidden, exact: true })).toHaveCount(0)
}

/** Gives the client a moment to hydrate and report problems (hydration errors, CSP, failed loads). */
async function settle(page: Page) {
	await page.waitForLoadState('load')
	await page.waitForLoadState('networkidle')
}

function expectNoUnexpectedConsoleErrors(errors: CollectedConsoleError[]) {
	const unexpected = unexpectedConsoleErrors(errors)
	expect(unexpected, `unexpected console errors:\n${formatConsoleErrors(unexpected)}`).toEqual([])
}

test.describe('home page, JavaScript on', () => {
	skipWithoutBrowser()

	test('renders the heading and the main navigation', async ({ page, consoleErrors }) => {
		const response = await page.goto('/')
		expect(response?.status()).toBe(200)
		await expect(page.getByRole('heading', { level: 1, name: HOME_HEADING })).toBeVisible()
		await expectMainNav(page, 'signed-out')
		await settle(page)
		expectNoUnexpectedConsoleErrors(consoleErrors)
	})

	test('has no serious accessibility violations; screenshots', async ({ page }) => {
		await page.goto('/')
		await expect(page.getByRole('heading', { level: 1, name: HOME_HEADING })).toBeVisible()
		await settle(page)
		await expectNoSeriousA11yViolations(page)
		await screenshotAtViewports(page, 'home')
	})
})

test.describe('home page, JavaScript off', () => {
	skipWithoutBrowser()
	test.use({ javaScriptEnabled: false })

	test('renders the heading and the main navigation', async ({ page }) => {
		const response = await page.goto('/')
		expect(response?.status()).toBe(200)
		await expect(page.getByRole('heading', { level: 1, name: HOME_HEADING })).toBeVisible()
		await expectMainNav(page, 'signed-out')
	})

	test('has no serious accessibility violations; screenshots', async ({ page }) => {
		await page.goto('/')
		await expect(page.getByRole('heading', { level: 1, name: HOME_HEADING })).toBeVisible()
		await expectNoSeriousA11yViolations(page, { javaScriptEnabled: false })
		await screenshotAtViewports(page, 'home-nojs')
	})
})

test.describe('/api/health', () => {
	test('answers JSON 200 with ok: true (API request)', async ({ request }) => {
		const response = await request.get('/api/health')
		expect(response.status()).toBe(200)
		expect(response.headers()['content-type']).toMatch(/^application\/json\b/)
		const body = (await response.json()) as Record<string, unknown>
		expect(body).toMatchObject({ ok: true })
	})

	for (const javaScriptEnabled of [true, false]) {
		test.describe(`in the browser, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, () => {
			skipWithoutBrowser()
			test.use({ javaScriptEnabled })

			test('answers JSON 200 with ok: true (page.goto)', async ({ page }) => {
				const response = await page.goto('/api/health')
				expect(response).not.toBeNull()
				expect(response!.status()).toBe(200)
				expect(response!.headers()['content-type']).toMatch(/^application\/json\b/)
				expect((await response!.json()) as Record<string, unknown>).toMatchObject({ ok: true })
			})
		})
	}
})

test.describe('signed in', () => {
	skipWithoutBrowser()

	test('the home page nav shows Account instead of Sign in, without console errors', async ({ page, consoleErrors }) => {
		await signIn(page, 'user_e2e_foundation')
		const response = await page.goto('/')
		expect(response?.status()).toBe(200)
		await expect(page.getByRole('heading', { level: 1, name: HOME_HEADING })).toBeVisible()
		await expectMainNav(page, 'signed-in')
		await settle(page)
		// Still signed in after hydration (the client must not flip the nav back).
		await expectMainNav(page, 'signed-in')
		expectNoUnexpectedConsoleErrors(consoleErrors)
	})
})

test.describe('sign-in page, Clerk script unreachable', () => {
	skipWithoutBrowser()

	test('renders the "Sign in" heading and stays usable', async ({ page, consoleErrors }) => {
		const response = await page.goto('/sign-in')
		expect(response?.status()).toBe(200)
		await expect(page.getByRole('heading', { level: 1, name: 'Sign in' })).toBeVisible()
		await settle(page)
		await expect(page.getByRole('heading', { level: 1, name: 'Sign in' })).toBeVisible()
		await expectMainNav(page, 'signed-out')

		// Usable: navigation still works although clerk-js never loaded.
		await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Contact', exact: true }).click()
		await expect(page).toHaveURL(/\/contact$/)
		await expect(page.getByRole('heading', { level: 1 })).toBeVisible()
		expectNoUnexpectedConsoleErrors(consoleErrors)
	})

	test('screenshots', async ({ page }) => {
		await page.goto('/sign-in')
		await expect(page.getByRole('heading', { level: 1, name: 'Sign in' })).toBeVisible()
		await settle(page)
		await screenshotAtViewports(page, 'sign-in')
	})
})

test.describe('sign-in page, JavaScript off', () => {
	skipWithoutBrowser()
	test.use({ javaScriptEnabled: false })

	test('renders the heading and says JavaScript is needed', async ({ page }) => {
		const response = await page.goto('/sign-in')
		expect(response?.status()).toBe(200)
		await expect(page.getByRole('heading', { level: 1, name: 'Sign in' })).toBeVisible()
		// getByText never looks inside <noscript>, even when scripting is off: locate by CSS instead.
		await expect(page.locator('main p', { hasText: 'Signing in needs JavaScript' })).toBeVisible()
		await expectNoSeriousA11yViolations(page, { javaScriptEnabled: false })
		await screenshotAtViewports(page, 'sign-in-nojs')
	})
})
