// The live character counts (contact's Message, the account's "Why are you leaving?") count what the
// field holds once the page is hydrated, not only what is typed after: text the browser puts back on
// Back, and text typed while the scripts were still loading, had the field described as "0 of …".
import type { Locator, Page } from '@playwright/test'
import { registerClerkUser } from './support/control.ts'
import { expect, settle, signIn, skipWithoutBrowser, test, uniqueId } from './support/fixtures.ts'

const PAGES = [
	{ path: '/contact', heading: 'Contact support', label: 'Message', max: '10,000' },
	{ path: '/account', heading: 'Your account', label: 'Why are you leaving? (optional)', max: '2,000' },
] as const

const TYPED = 'We wrapped the shoot early, thanks for everything.'
const COUNTED = `${TYPED.length} of`

async function signInIfNeeded(page: Page, path: string) {
	if (path !== '/account') return
	const userId = uniqueId('user_e2e_count')
	await registerClerkUser({ id: userId, email: `${userId}@example.test` })
	await signIn(page, userId)
}

const field = (page: Page, label: string): Locator => page.getByLabel(label, { exact: true })

test.describe('character counts, JavaScript on', () => {
	skipWithoutBrowser()

	for (const { path, heading, label, max } of PAGES) {
		test(`${path}: text put back by the browser on Back is counted`, async ({ page }) => {
			await signInIfNeeded(page, path)
			await page.goto(path)
			await settle(page)
			await field(page, label).fill(TYPED)
			await expect(field(page, label)).toHaveAccessibleDescription(`${COUNTED} ${max} characters`)
			// A document load away and Back (Playwright's Chromium has no back/forward cache): the browser
			// restores the field's text into the newly loaded page, with no input event.
			await page.goto('/')
			await page.goBack()
			await expect(page.getByRole('heading', { level: 1, name: heading })).toBeVisible()
			await settle(page)
			await expect(field(page, label)).toHaveValue(TYPED)
			await expect(field(page, label)).toHaveAccessibleDescription(`${COUNTED} ${max} characters`)
		})

		test(`${path}: text typed before the page's scripts ran is counted`, async ({ page }) => {
			await signInIfNeeded(page, path)
			// The page's scripts are held until the field has been typed in.
			let release = () => {}
			const held = new Promise<void>((resolve) => (release = resolve))
			await page.route(
				(url) => url.pathname.startsWith('/assets/') && url.pathname.endsWith('.js'),
				async (route) => {
					await held
					await route.fallback()
				},
			)
			await page.goto(path, { waitUntil: 'domcontentloaded' })
			await field(page, label).fill(TYPED)
			await expect(field(page, label)).toHaveAccessibleDescription(`Up to ${max} characters`)
			release()
			await settle(page)
			await expect(field(page, label)).toHaveAccessibleDescription(`${COUNTED} ${max} characters`)
		})
	}
})
