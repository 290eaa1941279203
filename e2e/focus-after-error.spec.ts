// With JavaScript, a refused form answers at another address than the page was shown at (the forms
// post to the bare path): the root's focus-on-navigation must not take focus (and the scroll) away
// from the error summary or alert that focused itself. At 375 px the heading and the summary are
// a screen apart, so a summary that lost focus is also out of sight.
import { registerClerkUser } from './support/control.ts'
import type { Page } from '@playwright/test'
import { expect, settle, signIn, skipWithoutBrowser, test, uniqueId, failedLoad } from './support/fixtures.ts'

test.describe('focus after a refused form, JavaScript on, 375 px', () => {
	skipWithoutBrowser()
	test.use({ viewport: { width: 375, height: 640 } })

	test('account opened from a checkout return: the error summary keeps focus and stays in view', async ({
		page,
		expectedConsoleErrors,
	}) => {
		expectedConsoleErrors.push(failedLoad(400, '/account'))
		const userId = uniqueId('user_e2e_focus_account')
		await registerClerkUser({ id: userId, email: `${userId}@example.test` })
		await signIn(page, userId)
		// A session id the processor does not know: the page only says it is still confirming.
		await page.goto('/account?checkout=success&session_id=cs_test_unknown')
		await settle(page)
		const zone = page.getByRole('region', { name: 'Delete your account' })
		await zone.getByLabel("Type your account's email address to confirm").fill('someone.else@example.test')
		await zone.getByRole('button', { name: 'Request account deletion' }).click()
		await expect(page).toHaveURL(/\/account$/)
		const summary = zone.getByRole('alert').filter({ hasText: 'There is a problem' })
		await expect(summary).toBeFocused()
		await expect(summary).toBeInViewport()
		await expect(page).toHaveTitle('Error: Your account · Callsheet')
	})

	/** Spends the user's thirty checkouts a minute (USER_WRITE_LIMITS.checkout) without the page. */
	async function spendCheckouts(page: Page) {
		for (let i = 0; i < 30; i++) {
			const response = await page.request.post('/pricing?interval=month', {
				form: { intent: 'checkout', plan: 'solo', interval: 'month' },
				maxRedirects: 0,
			})
			expect(response.status()).toBe(303)
		}
	}

	test('pricing at its bare address: the first refused checkout keeps focus on its alert', async ({ page, expectedConsoleErrors }) => {
		expectedConsoleErrors.push(failedLoad(429, '/pricing'))
		await signIn(page, uniqueId('user_e2e_focus_pricing'))
		await spendCheckouts(page)
		await page.goto('/pricing')
		await settle(page)
		await page.getByRole('button', { name: 'Start free trial of Solo, billed monthly' }).click()
		await expect(page).toHaveURL(/\/pricing\?interval=month$/)
		const alert = page.getByRole('alert')
		await expect(alert).toContainText('That was a lot of clicks in a short time.')
		await expect(alert).toBeFocused()
		await expect(alert).toBeInViewport()
	})

	test('pricing after a change of period: a refused checkout is said by its alert, not by the period again', async ({
		page,
		expectedConsoleErrors,
	}) => {
		expectedConsoleErrors.push(failedLoad(429, '/pricing'))
		await signIn(page, uniqueId('user_e2e_focus_period'))
		await spendCheckouts(page)
		await page.goto('/pricing')
		await settle(page)
		// Yearly, in place: the page's polite region says so.
		await page.getByRole('navigation', { name: 'Billing period' }).getByRole('link', { name: 'Yearly' }).click()
		const announcer = page.locator('p.visually-hidden[aria-live="polite"]')
		await expect(announcer).toHaveText('Showing yearly prices.')
		await page.getByRole('button', { name: 'Start free trial of Solo, billed yearly' }).click()
		const alert = page.getByRole('alert')
		await expect(alert).toContainText('That was a lot of clicks in a short time.')
		await expect(alert).toBeFocused()
		// The region does not repeat the period once the button's own words leave it.
		await expect(announcer).toHaveText('')
	})
})

test.describe('focus on an error page that replaces the page in place, JavaScript on', () => {
	skipWithoutBrowser()

	// A form refused outright (here: over the form limit, which the field's maxlength keeps a person
	// from typing) keeps its address: only the title changed, and focus stayed on the button.
	test('a contact form too long to take: the error page says so, and its heading has focus', async ({ page, expectedConsoleErrors }) => {
		expectedConsoleErrors.push(failedLoad(413, '/contact'))
		await page.goto('/contact')
		await settle(page)
		await page.getByLabel('Your name').fill('Ada')
		await page.getByLabel('Email').fill('ada@example.test')
		await page.getByLabel('Subject').fill('Too long')
		await page.getByLabel('Message').evaluate((field: HTMLTextAreaElement) => {
			field.removeAttribute('maxlength')
			field.value = 'x'.repeat(300 * 1024)
		})
		await page.getByRole('button', { name: 'Send message' }).click()
		const heading = page.getByRole('heading', { level: 1, name: 'That form was too long' })
		await expect(heading).toBeFocused()
		await expect(page).toHaveURL(/\/contact$/)
	})
})
