// Back from Stripe, with JavaScript: a billing button's form redirects the whole document to the
// processor, and Remix's navigation state in the page left behind stays "submitting". Browsers keep
// that page in the back/forward cache and Back restores it exactly as it was: every billing button
// disabled, until app/utils/client-navigation.ts reloads it.
import type { Locator, Page } from '@playwright/test'
import { expect, settle, signIn, skipWithoutBrowser, test, uniqueId } from './support/fixtures.ts'

// Playwright starts Chromium with --disable-back-forward-cache; people's browsers have the cache.
// (A launch option: it has to be set for the whole file, which gets a browser of its own.)
test.use({
	launchOptions: [
		async ({ launchOptions }, use) => use({ ...launchOptions, ignoreDefaultArgs: ['--disable-back-forward-cache'] }),
		{ scope: 'worker' },
	],
})

function planCard(page: Page, name: string): Locator {
	return page.getByRole('listitem', { name: new RegExp(`^${name}\\b`) })
}

/**
 * Presses `button` (which sends the document to the fake Stripe's page `stripeHeading`), then Back: the
 * app's page must come back from the cache (`restores` counts that), then have `button` usable again.
 */
async function pressThenBack(page: Page, button: Locator, stripeHeading: string, appHeading: string, restores: number) {
	await button.click()
	await expect(page.getByRole('heading', { level: 1, name: stripeHeading })).toBeVisible()
	// A page restored from the cache fires no load event: wait for the commit only.
	await page.goBack({ waitUntil: 'commit' })
	await expect(page.getByRole('heading', { level: 1, name: appHeading })).toBeVisible()
	await expect.poll(() => page.evaluate(() => Number(sessionStorage.getItem('e2e-restores') ?? '0'))).toBe(restores)
	await expect(button).toBeEnabled()
}

test.describe('billing, Back from Stripe with the back/forward cache (JavaScript on)', () => {
	skipWithoutBrowser()

	test('the billing buttons work again after Back from Checkout and from the portal', async ({ page }) => {
		test.slow() // two trips to the fake Stripe and back
		// Counts the restores from the cache, across the reload that follows each one (proves the cache was used).
		await page.addInitScript(() => {
			addEventListener('pageshow', (event) => {
				if (event.persisted) sessionStorage.setItem('e2e-restores', String(Number(sessionStorage.getItem('e2e-restores') ?? '0') + 1))
			})
		})
		await signIn(page, uniqueId('user_e2e_billing_back'))

		await page.goto('/pricing')
		await settle(page)
		const solo = planCard(page, 'Solo').getByRole('button', { name: 'Start free trial of Solo, billed monthly' })
		await pressThenBack(page, solo, 'Fake Stripe Checkout', 'Plans and pricing', 1)

		// Subscribe after all, then Back from the customer portal to the account page.
		await settle(page)
		await solo.click()
		await page.getByRole('button', { name: 'Pay' }).click()
		await expect(page).toHaveURL(/\/account\?checkout=success&session_id=cs_/)
		await settle(page)
		const manage = page.getByRole('region', { name: 'Plan and billing' }).getByRole('button', { name: 'Manage billing' })
		await pressThenBack(page, manage, 'Fake Stripe customer portal', 'Your account', 2)
	})
})
