// Billing journeys, with JavaScript on and off: a signed-in user picks Team, billed yearly, goes
// through the fake Stripe's hosted Checkout (whose Pay button sends signed webhooks to the app),
// comes back to an account showing the trial, and opens the customer portal. Also: signing in
// first when signed out, and the calm notice when checkout is canceled.
import type { Locator, Page } from '@playwright/test'
import { stripeDeliveries } from './support/control.ts'
import {
	CLERK_LOAD_FAILURE,
	expect,
	expectNoSeriousA11yViolations,
	expectNoUnexpectedConsoleErrors,
	screenshotAtViewports,
	settle,
	signIn,
	skipWithoutBrowser,
	test,
	uniqueId,
	whilePostHeld,
} from './support/fixtures.ts'
import { e2eBaseUrl, e2eStripeOrigin } from './support/env.ts'

const PLAN_NAMES = ['Free', 'Solo', 'Team', 'Studio', 'Agency', 'Network', 'Broadcaster']

function planCard(page: Page, name: string): Locator {
	return page.getByRole('listitem', { name: new RegExp(`^${name}\\b`) })
}

/** The <dd> that follows the <dt> labelled `term` in a definition list inside `scope`. */
function fact(scope: Locator, term: string): Locator {
	return scope.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]')
}

function escapeRegExp(value: string) {
	return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

for (const javaScriptEnabled of [true, false]) {
	const mode = javaScriptEnabled ? 'js' : 'nojs'
	const suffix = javaScriptEnabled ? '' : '-nojs'

	test.describe(`billing, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, () => {
		skipWithoutBrowser()
		test.use({ javaScriptEnabled })

		test('signed in: Team yearly trial through Checkout, then the account and the portal', async ({ page, consoleErrors }) => {
			test.slow() // one journey across the app and the fake Stripe, with screenshots at two sizes
			await signIn(page, uniqueId(`user_e2e_billing_${mode}`))
			const stripeOrigin = e2eStripeOrigin()
			const appOrigin = new URL(e2eBaseUrl()).origin

			// Pricing, monthly by default.
			expect((await page.goto('/pricing'))?.status()).toBe(200)
			await expect(page.getByRole('heading', { level: 1, name: 'Plans and pricing' })).toBeVisible()
			for (const name of PLAN_NAMES) await expect(planCard(page, name)).toBeVisible()
			const period = page.getByRole('navigation', { name: 'Billing period' })
			await expect(period.getByRole('link', { name: 'Monthly' })).toHaveAttribute('aria-current', 'page')
			await expect(planCard(page, 'Team')).toContainText('$49 / month')

			// Yearly, chosen from the keyboard.
			const yearly = period.getByRole('link', { name: 'Yearly' })
			if (javaScriptEnabled) await settle(page) // hydrated: Enter is the app's navigation, not the browser's
			await yearly.focus()
			await page.keyboard.press('Enter')
			await expect(page).toHaveURL(/\/pricing\?interval=year$/)
			await expect(yearly).toHaveAttribute('aria-current', 'page')
			if (javaScriptEnabled) {
				// The prices change in place: a polite region says what changed (once the page has rendered it),
				// and focus stays on the period, as on a tab. (Without JavaScript the link loads the page again,
				// at its top.)
				await expect(page.locator('[aria-live="polite"]', { hasText: 'Showing yearly prices.' })).toHaveCount(1)
				await expect(yearly).toBeFocused()
				// Another page, then Back: a page change again, so focus goes to the heading, not to the link.
				await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click()
				await expect(page.getByRole('heading', { level: 1, name: 'Your account' })).toBeFocused()
				await page.goBack()
				await expect(page).toHaveURL(/\/pricing\?interval=year$/)
				await expect(page.getByRole('heading', { level: 1, name: 'Plans and pricing' })).toBeFocused()
			}
			await expect(period.getByRole('link', { name: 'Monthly' })).not.toHaveAttribute('aria-current', 'page')
			const team = planCard(page, 'Team')
			await expect(team).toContainText('$490 / year')
			// What the trial turns into is said before the click.
			await expect(team).toContainText('14-day free trial, then $490 a year')
			await expect(planCard(page, 'Free')).toContainText('$0 forever')
			// The name starts with the button's visible words (WCAG 2.5.3), then says which plan.
			const subscribe = team.getByRole('button', { name: 'Start free trial of Team, billed yearly', exact: true })
			await expect(subscribe).toBeVisible()
			await expect(subscribe.locator('.visually-hidden')).toHaveText(' of Team, billed yearly')
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `pricing${suffix}`)

			// The fake Stripe's hosted Checkout. With JavaScript, the chosen plan's button says it is on its
			// way (held until seen), and every other plan's waits.
			if (javaScriptEnabled) {
				await whilePostHeld(
					page,
					'/pricing',
					() => subscribe.click(),
					async () => {
						await expect(team.getByRole('button', { name: 'Opening checkout… for Team, billed yearly', exact: true })).toBeDisabled()
						await expect(planCard(page, 'Solo').getByRole('button', { name: /^Start free trial of Solo/ })).toBeDisabled()
						// The pressed button goes disabled as its words change: a polite live region says it.
						await expect(page.locator('[aria-live="polite"]', { hasText: 'Opening checkout for Team…' })).toHaveCount(1)
					},
				)
			} else await subscribe.click()
			await expect(page).toHaveURL(new RegExp(`^${escapeRegExp(stripeOrigin)}/checkout/cs_[A-Za-z0-9_]+$`))
			await expect(page.getByRole('heading', { level: 1, name: 'Fake Stripe Checkout' })).toBeVisible()
			// The fake's seeded amounts are its own ($290 a year), not the app's price list: the account page
			// must then show what Checkout charges, not what /pricing offered (decision 0025).
			await expect(page.getByRole('listitem')).toContainText(['Plan: Team (year)'])
			await expect(page.getByRole('listitem')).toContainText([/ — 290\.00 USD \/ year$/])
			await expect(page.getByText('Includes a free trial of 14 days.')).toBeVisible()
			const sessionId = new URL(page.url()).pathname.split('/').pop() ?? ''

			// Pay: the fake delivers checkout.session.completed and customer.subscription.created, then
			// sends the browser back to the app.
			await page.getByRole('button', { name: 'Pay' }).click()
			await expect(page).toHaveURL(`${appOrigin}/account?checkout=success&session_id=${sessionId}`)
			await expect(page.getByRole('heading', { level: 1, name: 'Your account' })).toBeVisible()
			await expect(page.getByRole('status')).toHaveText('Thank you: your free trial has started.')
			const billing = page.getByRole('region', { name: 'Plan and billing' })
			await expect(fact(billing, 'Plan')).toHaveText('Team')
			await expect(fact(billing, 'Price')).toHaveText('$290 a year')
			await expect(fact(billing, 'Status')).toHaveText('Free trial')
			await expect(fact(billing, 'Daily credits')).toHaveText('600')
			await expect(fact(billing, 'Trial ends')).toHaveText(/^\d{1,2} [A-Z][a-z]+ \d{4}$/)
			// Its forms post to the bare /account: after an error, the return from Checkout is not settled (and thanked for) again.
			for (const form of await page.locator('main form:not([action="/sign-out"])').all())
				await expect(form).toHaveAttribute('action', '/account')

			// The app accepted both signed webhooks.
			const deliveries = await stripeDeliveries()
			const completed = deliveries.find((d) => d.type === 'checkout.session.completed' && d.objectId === sessionId)
			expect(completed, `no checkout.session.completed delivery for ${sessionId}`).toBeDefined()
			expect(completed?.customer).toMatch(/^cus_/)
			const created = deliveries.find((d) => d.type === 'customer.subscription.created' && d.customer === completed?.customer)
			expect({ completed: completed?.status, created: created?.status, errors: [completed?.error, created?.error] }).toEqual({
				completed: 200,
				created: 200,
				errors: [null, null],
			})

			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `account-subscribed${suffix}`)

			// Pricing now opens on the period they are billed in, marks the plan and offers Manage billing
			// instead of another subscription.
			await page.goto('/pricing')
			await expect(page.getByRole('navigation', { name: 'Billing period' }).getByRole('link', { name: 'Yearly' })).toHaveAttribute(
				'aria-current',
				'page',
			)
			await expect(page.getByText(/^You're on a free trial of Team until \d{1,2} [A-Z][a-z]+ \d{4}, then \$[\d,]+ a year\./)).toBeVisible()
			await expect(planCard(page, 'Team').getByText('Your plan')).toBeVisible()
			// Said once, above the plans, with the one Manage billing button: not again on every card.
			await expect(page.getByRole('button', { name: 'Manage billing' })).toHaveCount(1)
			await expect(planCard(page, 'Team').getByRole('button')).toHaveCount(0)
			await expect(planCard(page, 'Solo')).not.toContainText('Manage billing')
			await screenshotAtViewports(page, `pricing-subscribed${suffix}`)
			await expect(page.getByRole('button', { name: /, billed (monthly|yearly)$/ })).toHaveCount(0)
			// Billed yearly: Team billed monthly is not their plan; its card says how to switch.
			await page.getByRole('navigation', { name: 'Billing period' }).getByRole('link', { name: 'Monthly' }).click()
			await expect(planCard(page, 'Team')).toContainText('You have Team billed yearly.')
			await expect(page.getByText('Your plan')).toHaveCount(0)
			// Only the summary's, above the plans.
			await expect(page.getByRole('button', { name: 'Manage billing' })).toHaveCount(1)
			await screenshotAtViewports(page, `pricing-subscribed-other-period${suffix}`)

			// Manage billing from the account page: the fake customer portal, and back.
			await page.goto('/account')
			await page.getByRole('region', { name: 'Plan and billing' }).getByRole('button', { name: 'Manage billing' }).click()
			await expect(page).toHaveURL(new RegExp(`^${escapeRegExp(stripeOrigin)}/portal/`))
			await expect(page.getByRole('heading', { level: 1, name: 'Fake Stripe customer portal' })).toBeVisible()
			await expect(page.getByText(`Customer: ${completed?.customer}`)).toBeVisible()
			await page.getByRole('link', { name: 'Return to the app' }).click()
			await expect(page).toHaveURL(new RegExp(`^${escapeRegExp(appOrigin)}/account`))
			await expect(fact(page.getByRole('region', { name: 'Plan and billing' }), 'Plan')).toHaveText('Team')

			if (javaScriptEnabled) expectNoUnexpectedConsoleErrors(consoleErrors, { allow: [CLERK_LOAD_FAILURE] })
		})

		test('signed in: canceling Checkout comes back to a calm notice', async ({ page }) => {
			await signIn(page, uniqueId(`user_e2e_billing_cancel_${mode}`))
			await page.goto('/pricing')
			await planCard(page, 'Solo').getByRole('button', { name: 'Start free trial of Solo, billed monthly' }).click()
			await expect(page.getByRole('heading', { level: 1, name: 'Fake Stripe Checkout' })).toBeVisible()
			await page.getByRole('link', { name: 'Cancel and go back' }).click()
			await expect(page).toHaveURL(/\/pricing\?checkout=canceled$/)
			const notice = page.getByRole('status')
			await expect(notice).toHaveText('Checkout was canceled and nothing was charged. Pick a plan whenever you are ready.')
			// Nothing started: the plans can still be chosen, with their trial.
			await expect(planCard(page, 'Solo').getByRole('button', { name: 'Start free trial of Solo, billed monthly' })).toBeEnabled()
			// Still on Free, and the page says so.
			await expect(page.getByText('Your plan')).toHaveCount(1)
			await expect(planCard(page, 'Free').getByText('Your plan')).toBeVisible()
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `pricing-canceled${suffix}`)
		})

		test('signed out: subscribing asks to sign in first and comes back to the same period', async ({ page }) => {
			await page.goto('/pricing?interval=year')
			// Before the click, the page says a trial needs an account.
			await expect(page.getByText('You need a Callsheet account to start a free trial')).toBeVisible()
			// A visitor's first look at the plans (the page most visitors see), in the yearly period.
			await expect(planCard(page, 'Studio')).toContainText('$990 / year')
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `pricing-signed-out${suffix}`)
			const studio = planCard(page, 'Studio').getByRole('button', { name: 'Start free trial of Studio, billed yearly' })
			if (javaScriptEnabled) {
				// On its way to the sign-in page, not to checkout: the button keeps its words and nothing says otherwise.
				await whilePostHeld(
					page,
					'/pricing',
					() => studio.click(),
					async () => {
						await expect(studio).toBeDisabled()
						await expect(page.getByText(/Opening checkout/)).toHaveCount(0)
					},
				)
			} else await studio.click()
			await expect(page).toHaveURL(/\/sign-in\?redirect_url=%2Fpricing%3Finterval%3Dyear$/)
			await expect(page.getByRole('heading', { level: 1, name: 'Sign in' })).toBeVisible()
			// …and the sign-in page says why the visitor is there.
			await expect(page.getByText('Sign in or create an account to start your free trial.')).toBeVisible()
			await screenshotAtViewports(page, `sign-in-for-trial${suffix}`)
		})
	})
}

test.describe('pricing at 320 px with text at 200 %', () => {
	skipWithoutBrowser()
	test.use({ viewport: { width: 320, height: 640 } })

	test('the plans fit without scrolling sideways', async ({ page }) => {
		await page.goto('/pricing')
		await page.addStyleTag({ content: 'html { font-size: 200%; }' })
		await expect(planCard(page, 'Broadcaster')).toBeVisible()
		expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320)
	})
})

test.describe('pricing at three widths', () => {
	skipWithoutBrowser()

	test('the seven plans leave no hole: Free spans the grid, and each row of paid plans is full', async ({ page }) => {
		for (const [width, perRow] of [
			[1280, 3],
			[800, 2],
			[390, 1],
		] as const) {
			await page.setViewportSize({ width, height: 900 })
			await page.goto('/pricing')
			const boxes = await Promise.all(PLAN_NAMES.map(async (name) => (await planCard(page, name).boundingBox())!))
			const [free, ...paid] = boxes
			const right = (box: { x: number; width: number }) => Math.round(box.x + box.width)
			// Free above them all; then rows of `perRow` cards on one line each, left to right, each row
			// starting under Free's left edge and ending at its right edge.
			const rows = paid.length / perRow
			expect(Number.isInteger(rows), `${width}px`).toBe(true)
			expect(free!.y + free!.height, `${width}px`).toBeLessThanOrEqual(paid[0]!.y)
			for (let row = 0; row < rows; row++) {
				const cards = paid.slice(row * perRow, row * perRow + perRow)
				const where = `${width}px row ${row}`
				for (const card of cards) expect(Math.round(card.y), where).toBe(Math.round(cards[0]!.y))
				for (let i = 1; i < cards.length; i++) expect(cards[i]!.x, where).toBeGreaterThan(cards[i - 1]!.x + cards[i - 1]!.width)
				if (row > 0) expect(cards[0]!.y, where).toBeGreaterThan(paid[(row - 1) * perRow]!.y)
				expect(Math.round(cards[0]!.x), where).toBe(Math.round(free!.x))
				expect(right(cards[cards.length - 1]!), where).toBe(right(free!))
			}
		}
	})
})
