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
	failedLoad,
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
		// A first load leaves focus where the browser puts it.
		await expect(page.getByRole('heading', { level: 1 })).not.toBeFocused()
		expectNoUnexpectedConsoleErrors(consoleErrors)
	})

	test('a page changed by a header link is announced: focus moves to its heading', async ({ page }) => {
		await page.goto('/')
		await settle(page)
		const nav = page.getByRole('navigation', { name: 'Main' })
		await nav.getByRole('link', { name: 'Pricing', exact: true }).click()
		await expect(page.getByRole('heading', { level: 1, name: 'Plans and pricing' })).toBeFocused()
		await expect(page).toHaveTitle('Plans and pricing · Callsheet')
		await nav.getByRole('link', { name: 'Contact', exact: true }).click()
		await expect(page.getByRole('heading', { level: 1, name: 'Contact support' })).toBeFocused()
	})

	test('pages kept for visitors without cookies run their scripts, each load under its own nonce', async ({ page, consoleErrors }) => {
		// The second load is answered from the server's page cache (decision 0016) with a fresh nonce;
		// if a script carried another response's nonce, the CSP would block it and the page would not hydrate.
		for (let load = 0; load < 2; load++) {
			const response = await page.goto('/pricing')
			expect(response?.status()).toBe(200)
			await settle(page)
			await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Contact', exact: true }).click()
			await expect(page.getByRole('heading', { level: 1, name: 'Contact support' })).toBeFocused()
		}
		expectNoUnexpectedConsoleErrors(consoleErrors)
	})

	test('the keyboard focus ring is dark ink with a paper gap (3:1 on every background)', async ({ page }) => {
		await page.goto('/')
		await settle(page)
		await page.keyboard.press('Tab') // the skip link
		await page.keyboard.press('Tab') // the brand link, on the white header
		const brand = page.getByRole('link', { name: 'Callsheet', exact: true })
		await expect(brand).toBeFocused()
		await expect(brand).toHaveCSS('outline-color', 'rgb(22, 24, 29)')
		await expect(brand).toHaveCSS('outline-style', 'solid')
		await expect(brand).toHaveCSS('box-shadow', 'rgb(255, 255, 255) 0px 0px 0px 2px')
	})

	test('has no serious accessibility violations; screenshots', async ({ page }) => {
		await page.goto('/')
		await expect(page.getByRole('heading', { level: 1, name: HOME_HEADING })).toBeVisible()
		await settle(page)
		await expectNoSeriousA11yViolations(page)
		await screenshotAtViewports(page, 'home')
	})
})

test.describe('home page at five widths', () => {
	skipWithoutBrowser()

	test('the three features leave no hole: three in a row, or one under another', async ({ page }) => {
		for (const [width, perRow] of [
			[1280, 3],
			[900, 3],
			[768, 1],
			[640, 1],
			[390, 1],
		] as const) {
			await page.setViewportSize({ width, height: 900 })
			await page.goto('/')
			const cards = page.getByRole('region', { name: 'From the first read to the last shooting day' }).getByRole('listitem')
			await expect(cards).toHaveCount(3)
			const tops = await cards.evaluateAll((items) => items.map((item) => Math.round(item.getBoundingClientRect().top)))
			const rows = new Set(tops).size
			expect(rows, `${width}px`).toBe(3 / perRow)
		}
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

		// Once the page's JavaScript runs, it says the sign-in service is on its way.
		await expect(page.getByRole('status')).toHaveText(/^(Loading sign-in…|The sign-in service is not responding\.)/)

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
		// …and nothing claims to be loading: without JavaScript nothing will.
		await expect(page.locator('main')).not.toContainText('Loading sign-in')
		await expect(page.getByRole('status')).toHaveCount(0)
		await expectNoSeriousA11yViolations(page, { javaScriptEnabled: false })
		await screenshotAtViewports(page, 'sign-in-nojs')
	})

	test('the pricing page says so before a plan is chosen', async ({ page }) => {
		await page.goto('/pricing')
		await expect(page.locator('main p', { hasText: 'Signing in needs JavaScript' })).toBeVisible()
	})
})

test.describe('titles and descriptions', () => {
	skipWithoutBrowser()
	test.use({ javaScriptEnabled: false })

	const pages = [
		{ path: '/', title: 'Callsheet · Pre-production for film and video' },
		{ path: '/pricing', title: 'Plans and pricing · Callsheet' },
		{ path: '/contact', title: 'Contact support · Callsheet' },
		{ path: '/sign-in', title: 'Sign in · Callsheet' },
	]
	for (const { path, title } of pages) {
		test(`${path} has its own title and a description`, async ({ page }) => {
			await page.goto(path)
			await expect(page).toHaveTitle(title)
			const descriptions = page.locator('meta[name="description"]')
			await expect(descriptions).toHaveCount(1)
			expect((await descriptions.getAttribute('content'))?.length ?? 0).toBeGreaterThan(40)
		})
	}
})

test.describe('error pages say whether trying again can help', () => {
	skipWithoutBrowser()
	test.use({ javaScriptEnabled: false })

	test('an unknown address: page not found', async ({ page, expectedConsoleErrors }) => {
		expectedConsoleErrors.push(failedLoad(404, '/no-such-page'))
		expect((await page.goto('/no-such-page'))?.status()).toBe(404)
		await expect(page.getByRole('heading', { level: 1, name: 'Page not found' })).toBeVisible()
		await expect(page).toHaveTitle('Page not found · Callsheet')
		await expect(page.locator('meta[name="description"]')).toHaveCount(1)
	})

	test('a form too long to accept (413): says to shorten it, not to retry', async ({ page, expectedConsoleErrors }) => {
		expectedConsoleErrors.push(failedLoad(413, '/contact'))
		await page.goto('/contact')
		const form = page.getByRole('form', { name: 'Contact support' })
		await form
			.getByLabel('Message', { exact: true })
			.evaluate((area, text) => ((area as HTMLTextAreaElement).value = text), '€'.repeat(35_000)) // 315 KB url-encoded: over the page forms' 256 KiB
		const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.request().resourceType() === 'document')
		await form.getByRole('button', { name: 'Send message' }).click()
		expect((await posted).status()).toBe(413)
		await expect(page.getByRole('heading', { level: 1, name: 'That form was too long' })).toBeVisible()
		await expect(page.locator('main')).toContainText('shorten your text')
		await expect(page.locator('main')).not.toContainText('try again in a moment')
		await expect(page).toHaveTitle('That form was too long · Callsheet')
		await screenshotAtViewports(page, 'error-413-nojs')
	})
})

for (const javaScriptEnabled of [true, false]) {
	test.describe(`the 404 page signed in, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, () => {
		skipWithoutBrowser()
		test.use({ javaScriptEnabled })

		test('the header offers the account, not sign-in', async ({ page, consoleErrors, expectedConsoleErrors }) => {
			expectedConsoleErrors.push(failedLoad(404, '/no-such-page'))
			await signIn(page, `user_e2e_404_${javaScriptEnabled ? 'js' : 'nojs'}_${Math.random().toString(36).slice(2, 8)}`)
			expect((await page.goto('/no-such-page'))?.status()).toBe(404)
			await expect(page.getByRole('heading', { level: 1, name: 'Page not found' })).toBeVisible()
			await expectMainNav(page, 'signed-in')
			if (javaScriptEnabled) {
				// Still so once hydrated.
				await settle(page)
				await expectMainNav(page, 'signed-in')
				expectNoUnexpectedConsoleErrors(consoleErrors.filter((e) => !/status of 404/.test(e.text)))
			}
		})
	})
}
