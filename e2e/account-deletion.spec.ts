// Account deletion, with JavaScript on and off: a signed-in user (known to the fake Clerk Backend
// API, which the app asks for the primary email) files a deletion request from the account page's
// danger zone, after a wrong email is refused; an administrator then marks it processed on
// /admin/deletion-requests, which other users cannot see at all.
import type { Locator, Page } from '@playwright/test'
import { registerClerkUser } from './support/control.ts'
import {
	CLERK_LOAD_FAILURE,
	E2E_ADMIN_USER_ID,
	expect,
	expectNoSeriousA11yViolations,
	expectNoUnexpectedConsoleErrors,
	screenshotAtViewports,
	settle,
	signIn,
	skipWithoutBrowser,
	test,
	uniqueId,
	failedLoad,
} from './support/fixtures.ts'

const REASON_MAX = '2,000'

/** The account page shows dates like "22 November 2025" (en-GB, UTC). */
function displayedDate(date: Date): string {
	return date.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })
}

/** Matches the date shown for a moment between `from` and `to`: either day when they straddle midnight UTC. */
function displayedDateBetween(from: Date, to: Date): RegExp {
	const days = [...new Set([displayedDate(from), displayedDate(to)])]
	return new RegExp(`(${days.join('|')})`)
}

function dangerZone(page: Page): Locator {
	return page.getByRole('region', { name: 'Delete your account' })
}

/** The <dd> that follows the <dt> labelled `term` in a definition list inside `scope`. */
function fact(scope: Locator, term: string): Locator {
	return scope.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]')
}

for (const javaScriptEnabled of [true, false]) {
	const mode = javaScriptEnabled ? 'js' : 'nojs'
	const suffix = javaScriptEnabled ? '' : '-nojs'

	test.describe(`account deletion, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, () => {
		skipWithoutBrowser()
		test.use({ javaScriptEnabled })

		test('signed out, the account page asks to sign in first', async ({ page }) => {
			await page.goto('/account')
			await expect(page).toHaveURL(/\/sign-in\?redirect_url=%2Faccount$/)
			await expect(page.getByRole('heading', { level: 1, name: 'Sign in' })).toBeVisible()
		})

		test('a user files a request (a wrong email is refused); an admin marks it processed', async ({
			page,
			consoleErrors,
			expectedConsoleErrors,
		}) => {
			test.slow() // two people, four screenshots at two sizes, five axe runs
			// The wrong email is refused (400); the user is shown no admin page (404).
			expectedConsoleErrors.push(
				failedLoad(400, '/account'),
				failedLoad(400, '/admin/deletion-requests'),
				failedLoad(404, '/admin/deletion-requests'),
			)
			const userId = uniqueId(`user_e2e_deletion_${mode}`)
			const email = `${userId}@example.test`
			const reason = `Our production wrapped <early> & we no longer need a call sheet (${mode}).`
			await registerClerkUser({ id: userId, email })
			await signIn(page, userId)

			// The danger zone, before.
			expect((await page.goto('/account'))?.status()).toBe(200)
			await expect(page.getByRole('heading', { level: 1, name: 'Your account' })).toBeVisible()
			const zone = dangerZone(page)
			await expect(zone.getByRole('heading', { level: 2, name: 'Delete your account' })).toBeVisible()
			const confirm = zone.getByLabel("Type your account's email address to confirm")
			const why = zone.getByLabel('Why are you leaving? (optional)')
			const submit = zone.getByRole('button', { name: 'Request account deletion' })
			// The server states the limit; only a hydrated page counts, so nothing reads a count that does not follow the typing.
			await expect(why).toHaveAccessibleDescription(javaScriptEnabled ? `0 of ${REASON_MAX} characters` : `Up to ${REASON_MAX} characters`)
			// The user's own address: the browser may offer it, and the page says which one it is.
			await expect(confirm).toHaveAttribute('autocomplete', 'email')
			await expect(confirm).toHaveAccessibleDescription(`Your account's email address is ${email}.`)
			await expect(page.getByText(`Signed in as ${email}`)).toBeVisible()
			await expect(page).toHaveTitle('Your account · Callsheet')
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `account-deletion-before${suffix}`)

			// A wrong email: refused next to the field, what was typed is kept.
			await confirm.fill('someone.else@example.test')
			await why.fill(reason)
			if (javaScriptEnabled) {
				// The counter follows the typing.
				await expect(why).toHaveAccessibleDescription(`${reason.length.toLocaleString('en-US')} of ${REASON_MAX} characters`)
			}
			await submit.click()
			// Refused: the title says so first; a summary, focused (by autofocus without JavaScript), links to the field.
			await expect(page).toHaveTitle('Error: Your account · Callsheet')
			// Inside the section's h2, the summary's heading is an h3.
			const summary = zone.getByRole('alert').filter({ has: page.getByRole('heading', { level: 3, name: 'There is a problem' }) })
			await expect(summary).toBeFocused()
			await expect(summary.getByRole('link', { name: 'That is not the email address of this account.' })).toHaveAttribute(
				'href',
				'#confirmEmail',
			)
			await expect(confirm).toHaveAttribute('aria-invalid', 'true')
			await expect(confirm).toHaveAccessibleDescription(
				`Your account's email address is ${email}. That is not the email address of this account.`,
			)
			await expect(confirm).toHaveValue('someone.else@example.test')
			await expect(why).toHaveValue(reason)
			await expect(why).toHaveAccessibleDescription(
				javaScriptEnabled ? `${reason.length.toLocaleString('en-US')} of ${REASON_MAX} characters` : `Up to ${REASON_MAX} characters`,
			)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `account-deletion-wrong-email${suffix}`)
			// The summary's link leads to the field and keeps the error it leads there for.
			await summary.getByRole('link', { name: 'That is not the email address of this account.' }).click()
			await expect(confirm).toBeFocused()
			await expect(summary).toBeVisible()
			await expect(confirm).toHaveAttribute('aria-invalid', 'true')
			await expect(confirm).toHaveAccessibleDescription(/That is not the email address of this account\./)

			// The right email (in another case: the comparison ignores it): filed and shown as pending.
			await confirm.fill(email.toUpperCase())
			if (javaScriptEnabled) {
				// Offline: the form stays, with what was typed, and says so (nothing is reloaded: that would fail too).
				expectedConsoleErrors.push(/net::ERR_INTERNET_DISCONNECTED \(at [^)]*\/account\?_data=/) // Chromium logs the cut-off load
				await page.context().setOffline(true)
				await submit.click()
				await expect(
					page.getByRole('alert').filter({ hasText: 'We could not reach Callsheet, so your request may not have been sent.' }),
				).toBeVisible()
				await expect(confirm).toHaveValue(email.toUpperCase())
				await expect(why).toHaveValue(reason)
				await expect(submit).toBeEnabled()
				await page.context().setOffline(false)
			}
			const submittedFrom = new Date()
			await submit.click()
			const filed = zone.getByRole('status')
			await expect(filed).toContainText('You asked for your account to be deleted on')
			// The server stamped the request between the click and now.
			const filedOn = displayedDateBetween(submittedFrom, new Date())
			await expect(filed).toContainText(new RegExp(`You asked for your account to be deleted on ${filedOn.source}`))
			await expect(filed).toContainText('(Reference ')
			// How to take it back: the link to support fills in a subject that names the request.
			const reference = /\(Reference ([0-9a-f-]{36})\)/.exec((await filed.textContent()) ?? '')?.[1]
			expect(reference).toBeTruthy()
			await expect(filed).toContainText('Contact support before then to withdraw the request.')
			await expect(filed.getByRole('link', { name: 'Contact support' })).toHaveAttribute(
				'href',
				`/contact?${new URLSearchParams({ subject: `Keep my account (deletion request ${reference})` })}`,
			)
			await expect(submit).toHaveCount(0)
			// Post/Redirect/Get: the confirmation is a page of its own, titled and focused (autofocus without JavaScript).
			await expect(page).toHaveURL(/\/account\?deletion=requested$/)
			await expect(page).toHaveTitle('Deletion requested · Your account · Callsheet')
			await expect(filed).toBeFocused()
			// Reloading it asks for the page again, never posts the form again.
			const reloaded = await page.reload()
			expect(reloaded?.request().method()).toBe('GET')
			await expect(dangerZone(page).getByRole('status')).toContainText('You asked for your account to be deleted on')
			// Still pending after a fresh load of the bare page.
			await page.goto('/account')
			await expect(dangerZone(page).getByRole('status')).toContainText('You asked for your account to be deleted on')
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `account-deletion-filed${suffix}`)

			// While the request is pending, /pricing says why no plan can be started, and offers none (0020).
			await page.goto('/pricing')
			await expect(page.getByText(/You asked for your account to be deleted on .+, so new plans cannot be started\./)).toBeVisible()
			await expect(page.getByRole('button', { name: /^(Start free trial|Subscribe)/ })).toHaveCount(0)
			await expect(page.getByText('Not available while your account is due to be deleted.')).toHaveCount(6)
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `pricing-deletion-pending${suffix}`)

			// The admin page does not exist for this user.
			expect((await page.goto('/admin/deletion-requests'))?.status()).toBe(404)

			// The administrator.
			await page.context().clearCookies()
			await signIn(page, E2E_ADMIN_USER_ID)
			expect((await page.goto('/admin/deletion-requests'))?.status()).toBe(200)
			await expect(page.getByRole('heading', { level: 1, name: 'Pending deletion requests' })).toBeVisible()
			// Other journeys may have requests pending too: look only at this user's.
			const request = page.getByRole('listitem', { name: `Request from ${userId}` })
			await expect(request).toBeVisible()
			// Items of one list, not a landmark each: the page's landmarks stay the page's own.
			await expect(page.getByRole('region')).toHaveCount(0)
			await expect(fact(request, 'Filed')).toHaveText(new RegExp(`^${filedOn.source}$`))
			await expect(fact(request, 'Subscription')).toHaveText('Free · No subscription')
			await expect(fact(request, 'Stripe customer')).toHaveText('None')
			await expect(fact(request, 'Reason')).toHaveText(reason)
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `admin-deletion-requests${suffix}`)

			// Every request's button says whose it is.
			await expect(request.getByRole('heading', { level: 2, name: `Request from ${userId}` })).toBeVisible()
			// Marking is final: the administrator first confirms the deletion was done. Unticked, the
			// refusal names whose request, and that request's box says what to do.
			const done = request.getByRole('checkbox', { name: `I have deleted this account and its data (request from ${userId})` })
			await request.getByRole('button', { name: `Mark processed (request from ${userId})`, exact: true }).click()
			// In that request's card, above its box: not at the top of a list, over another request's box.
			await expect(page.getByRole('alert')).toHaveCount(1)
			await expect(request.getByRole('alert')).toHaveText(
				`Nothing was marked for the request from ${userId}: tick "I have deleted this account and its data" first.`,
			)
			await expect(request.getByRole('alert')).toBeFocused()
			await screenshotAtViewports(page, `admin-deletion-refused${suffix}`)
			await expect(done).toHaveAttribute('aria-invalid', 'true')
			await expect(done).toHaveAccessibleDescription('Tick this once the account and its data are deleted.')
			await done.check()
			await request.getByRole('button', { name: `Mark processed (request from ${userId})`, exact: true }).click()
			// The outcome names the request, and is focused (autofocus without JavaScript) on a page of its own.
			await expect(page.getByRole('status')).toHaveText(`Marked the request from ${userId} processed.`)
			await expect(page.getByRole('status')).toBeFocused()
			await expect(page).toHaveURL(/\/admin\/deletion-requests\?processed=[0-9a-f-]{36}$/)
			expect((await page.reload())?.request().method()).toBe('GET')
			await expect(request).toHaveCount(0)
			await page.goto('/admin/deletion-requests')
			await expect(page.getByRole('heading', { level: 1, name: 'Pending deletion requests' })).toBeVisible()
			await expect(page.getByRole('listitem', { name: `Request from ${userId}` })).toHaveCount(0)

			if (javaScriptEnabled) {
				expectNoUnexpectedConsoleErrors(consoleErrors, {
					allow: [
						// Answered on purpose: the refused email and the unticked box (400), and the hidden admin page (404).
						/status of 400 \(Bad Request\) \(at [^)]*\/account[?.]/,
						/status of 400 \(Bad Request\) \(at [^)]*\/admin\/deletion-requests[?.]/,
						/status of 404 \(Not Found\) \(at [^)]*\/admin\/deletion-requests\)/,
						CLERK_LOAD_FAILURE,
						...expectedConsoleErrors,
					],
				})
			}
		})
	})
}

test.describe('account deletion refusals, JavaScript off', () => {
	skipWithoutBrowser()
	test.use({ javaScriptEnabled: false })

	async function fileWith(page: Page, email: string) {
		await dangerZone(page).getByLabel("Type your account's email address to confirm").fill(email)
		const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.request().resourceType() === 'document')
		await dangerZone(page).getByRole('button', { name: 'Request account deletion' }).click()
		return posted
	}

	test('an account the identity provider no longer knows is asked to sign in again', async ({ page, expectedConsoleErrors }) => {
		expectedConsoleErrors.push(failedLoad(401, '/account'))
		await signIn(page, uniqueId('user_e2e_deletion_gone')) // never registered at the fake Clerk
		await page.goto('/account')
		expect((await fileWith(page, 'gone@example.test')).status()).toBe(401)
		const notice = page.getByRole('alert')
		await expect(notice).toContainText('Your session has ended, so nothing was filed.')
		await expect(notice.getByRole('link', { name: 'Sign in again' })).toHaveAttribute('href', '/sign-in?redirect_url=%2Faccount')
		await expect(notice).toBeFocused()
		await expect(page).toHaveTitle('Error: Your account · Callsheet')
	})

	test('too many attempts say how long to wait', async ({ page, expectedConsoleErrors }) => {
		expectedConsoleErrors.push(failedLoad(429, '/account'))
		const userId = uniqueId('user_e2e_deletion_limit')
		await registerClerkUser({ id: userId, email: `${userId}@example.test` })
		await signIn(page, userId)
		// Ten attempts a minute are allowed (USER_WRITE_LIMITS.deletion): spend them without the page.
		for (let i = 0; i < 10; i++) {
			const response = await page.request.post('/account', { form: { intent: 'delete-request', confirmEmail: 'wrong@example.test' } })
			expect(response.status()).toBe(400)
		}
		await page.goto('/account')
		const response = await fileWith(page, 'wrong@example.test')
		expect(response.status()).toBe(429)
		const seconds = Number(response.headers()['retry-after'])
		expect(seconds).toBeGreaterThan(0)
		const wait =
			seconds <= 45 ? `about ${seconds} second${seconds === 1 ? '' : 's'}` : seconds <= 90 ? 'about a minute' : /about \d+ minutes/
		await expect(page.getByRole('alert')).toContainText('Too many attempts in a short time. Nothing was filed: please wait')
		await expect(page.getByRole('alert')).toContainText(wait)
	})
})

test.describe('the account email on a 320 px phone', () => {
	skipWithoutBrowser()
	test.use({ viewport: { width: 320, height: 800 } })

	/** The lines `element`'s text takes on screen, as the browser broke them. */
	function linesOf(element: Locator) {
		return element.evaluate((root) => {
			const lines: string[] = []
			let line = ''
			let top: number | undefined
			const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
			for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
				for (let i = 0; i < node.data.length; i++) {
					const range = document.createRange()
					range.setStart(node, i)
					range.setEnd(node, i + 1)
					const charTop = range.getClientRects()[0]?.top
					if (charTop === undefined) continue
					if (top !== undefined && Math.abs(charTop - top) > 3) {
						lines.push(line)
						line = ''
					}
					top = charTop
					line += node.data[i]
				}
			}
			return [...lines, line]
		})
	}

	/** What a copy of `element`'s whole text gives. */
	const copied = (element: Locator) =>
		element.evaluate((root) => {
			const selection = getSelection()!
			selection.selectAllChildren(root)
			return selection.toString()
		})

	test('breaks before the @ or a dot, never after a hyphen, and copies as typed', async ({ page }) => {
		const userId = uniqueId('user_e2e_email')
		// A hyphen in the domain, and a domain too long for the hint's line at 320 px.
		const email = `${userId}@subdomain.example-production.test`
		await registerClerkUser({ id: userId, email })
		await signIn(page, userId)
		await page.goto('/account')
		const signedInAs = page.locator('.lead strong')
		const hint = page.locator('#confirmEmail-hint')
		await expect(signedInAs).toHaveText(email)
		await expect(page.getByLabel("Type your account's email address to confirm")).toHaveAccessibleDescription(
			`Your account's email address is ${email}.`,
		)

		for (const [element, text] of [
			[signedInAs, email],
			[hint, `Your account's email address is ${email}.`],
		] as const) {
			const lines = await linesOf(element)
			expect(lines.join(''), `${lines}`).toBe(text)
			expect(lines.length, `${lines}`).toBeGreaterThan(1)
			// No line ends in a hyphen; the address's lines start at its @ or at a dot.
			for (const line of lines) expect(line, `${lines}`).not.toMatch(/-$/)
			for (const line of lines.slice(lines.findIndex((l) => l.includes(userId)) + 1)) expect(line, `${lines}`).toMatch(/^[@.]/)
			// A copy is the address itself, not a look-alike (a non-breaking hyphen, a joiner).
			expect(await copied(element)).toBe(text)
		}
		// Nothing pushes the page sideways.
		expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320)
	})
})
