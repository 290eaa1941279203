// Contact journey, with JavaScript on and off: a submission with errors keeps what was typed and
// says what to fix; the corrected one lands on "Message sent", and the email that reached the SMTP
// sink (read back through the control server) has the right subject, Reply-To and escaped HTML.
//
// The app allows 5 contact messages a minute per client IP and every browser test comes from
// 127.0.0.1: this file sends exactly 2 (one per describe). Keep it that way.
import type { Page } from '@playwright/test'
import { waitForMail } from './support/control.ts'
import {
	CLERK_LOAD_FAILURE,
	expect,
	expectNoSeriousA11yViolations,
	expectNoUnexpectedConsoleErrors,
	screenshotAtViewports,
	settle,
	skipWithoutBrowser,
	test,
	uniqueId,
	whilePostHeld,
	failedLoad,
} from './support/fixtures.ts'

function contactForm(page: Page) {
	return page.getByRole('form', { name: 'Contact support' })
}

function fields(page: Page) {
	const form = contactForm(page)
	return {
		name: form.getByLabel('Your name', { exact: true }),
		email: form.getByLabel('Email', { exact: true }),
		subject: form.getByLabel('Subject', { exact: true }),
		message: form.getByLabel('Message', { exact: true }),
		submit: form.locator('button[type="submit"]'),
	}
}

for (const javaScriptEnabled of [true, false]) {
	const mode = javaScriptEnabled ? 'js' : 'nojs'

	test.describe(`contact form, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, () => {
		skipWithoutBrowser()
		test.use({ javaScriptEnabled })

		test('errors keep the input; the fixed message is sent and arrives escaped', async ({ page, consoleErrors, expectedConsoleErrors }) => {
			test.slow() // a refusal, a fix and a sent message, with axe runs and screenshots at two sizes (15 s alone, 32 s once beside the other journeys)
			expectedConsoleErrors.push(failedLoad(400, '/contact'))
			const tag = uniqueId(`e2e_contact_${mode}`)
			const typed = {
				name: `Ada O'Hara ${mode}`,
				badEmail: 'ada-at-example',
				email: `ada.${mode}@example.test`,
				subject: `Invoice <${tag}> & "more"`,
				message: `Hello <b>crew</b> & friends,\nplease check the invoice for ${tag}.`,
			}

			const response = await page.goto('/contact')
			expect(response?.status()).toBe(200)
			await expect(page.getByRole('heading', { level: 1, name: 'Contact support' })).toBeVisible()
			await expect(page).toHaveTitle('Contact support · Callsheet')
			await expect(page.locator('meta[name="description"]')).toHaveAttribute('content', /Write to Callsheet support/)
			await expect(page.getByRole('form', { name: 'Contact support' })).toContainText('All fields are required.')
			if (javaScriptEnabled) await settle(page)

			// 1. A bad email and an empty subject.
			const f = fields(page)
			// The message's limit is shown: a browser cuts pasted text at it without a word.
			await expect(f.message).toHaveAccessibleDescription(javaScriptEnabled ? '0 of 10,000 characters' : 'Up to 10,000 characters')
			await f.name.fill(typed.name)
			await f.email.fill(typed.badEmail)
			await f.message.fill(typed.message)
			if (javaScriptEnabled) {
				await expect(f.message).toHaveAccessibleDescription(`${typed.message.length} of 10,000 characters`)
			}

			const posts: string[] = []
			page.on('request', (request) => {
				if (request.method() === 'POST' && new URL(request.url()).pathname === '/contact') posts.push(request.url())
			})
			if (javaScriptEnabled) {
				// Hold the submission until the pending state has been seen, then let it through.
				await whilePostHeld(
					page,
					'/contact',
					() => f.submit.click(),
					async () => {
						await expect(f.submit).toHaveText('Sending…')
						await expect(f.submit).toBeDisabled()
						// Still focused: a disabled button under the focus dropped it to the top of the page.
						await expect(f.submit).toBeFocused()
						// Pressed again, or Enter in a field, while it is on its way: nothing is sent twice.
						await f.submit.click({ force: true }) // force: Playwright itself waits for an aria-disabled button
						await f.name.press('Enter')
					},
				)
			} else {
				const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.request().resourceType() === 'document')
				await f.submit.click()
				// Without JavaScript the browser shows the action's own answer: 400 with the form.
				expect((await posted).status()).toBe(400)
			}

			const form = contactForm(page)
			await expect(form.getByText('Enter a valid email address.')).toBeVisible()
			expect(posts).toHaveLength(1)
			await expect(form.getByText('Enter a subject.')).toBeVisible()
			await expect(f.submit).toHaveText('Send message')
			await expect(f.submit).toBeEnabled()
			await expect(page).toHaveURL(/\/contact$/)
			// What was typed is still there…
			await expect(f.name).toHaveValue(typed.name)
			await expect(f.email).toHaveValue(typed.badEmail)
			await expect(f.message).toHaveValue(typed.message)
			// …the invalid fields are marked and described by their errors…
			await expect(f.email).toHaveAttribute('aria-invalid', 'true')
			await expect(f.subject).toHaveAttribute('aria-invalid', 'true')
			await expect(f.email).toHaveAccessibleDescription(/Enter a valid email address\./)
			await expect(f.subject).toHaveAccessibleDescription(/Enter a subject\./)
			await expect(f.name).not.toHaveAttribute('aria-invalid', 'true')
			await expect(f.message).not.toHaveAttribute('aria-invalid', 'true')
			// …the title says so first, and a summary above the form, focused (by autofocus without
			// JavaScript), is announced and links to each field to fix.
			await expect(page).toHaveTitle('Error: Contact support · Callsheet')
			const summary = page.getByRole('alert').filter({ has: page.getByRole('heading', { name: 'There is a problem' }) })
			await expect(summary).toBeFocused()
			await expect(summary.getByRole('link')).toHaveText(['Enter a valid email address.', 'Enter a subject.'])
			await expect(summary.getByRole('link', { name: 'Enter a subject.' })).toHaveAttribute('href', '#subject')
			await summary.getByRole('link', { name: 'Enter a valid email address.' }).click()
			await expect(f.email).toBeFocused()
			await expect(page.locator('label[for="email"]')).toBeInViewport()
			// Following the link keeps what it was followed for: the summary, the field's error and its
			// marking (with JavaScript the jump to #email had been a navigation that dropped them all).
			await expect(summary).toBeVisible()
			await expect(f.email).toHaveAttribute('aria-invalid', 'true')
			await expect(f.email).toHaveAccessibleDescription(/Enter a valid email address\./)
			await expect(form.getByText('Enter a subject.')).toBeVisible()
			await expect(page).toHaveTitle('Error: Contact support · Callsheet')
			if (javaScriptEnabled) await page.unrouteAll()
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `contact-errors${javaScriptEnabled ? '' : '-nojs'}`)

			// 2. Fixed: the message goes out.
			await f.email.fill(typed.email)
			await f.subject.fill(typed.subject)
			if (javaScriptEnabled) {
				// Offline: the form stays, with what was typed, and says so (it had become the error page, "on
				// our side", and the message was gone). Nothing is reloaded: that would fail too.
				expectedConsoleErrors.push(/net::ERR_INTERNET_DISCONNECTED \(at [^)]*\/contact\?_data=/) // Chromium logs the failed load
				await page.context().setOffline(true)
				await f.submit.click()
				const lost = page.getByRole('alert').filter({ hasText: 'We could not reach Callsheet, so your message may not have been sent.' })
				await expect(lost).toBeFocused()
				await expect(f.subject).toHaveValue(typed.subject)
				await expect(f.message).toHaveValue(typed.message)
				await expect(f.email).toHaveValue(typed.email)
				await expect(f.submit).toHaveText('Send message')
				await expect(page).toHaveTitle('Error: Contact support · Callsheet')
				await page.context().setOffline(false)
			}
			await f.submit.click()
			await expect(page).toHaveURL(/\/contact\?sent=1$/)
			const sent = page.getByRole('heading', { level: 1, name: 'Message sent' })
			await expect(sent).toBeVisible()
			await expect(page).toHaveTitle('Message sent · Callsheet')
			await expect(page.getByRole('status')).toContainText('your message is on its way')
			// Focus is on the new heading, so it is read: moved there after a send with JavaScript (the page
			// changes without a load), autofocused when the page loads without it.
			await expect(sent).toBeFocused()
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `contact-sent${javaScriptEnabled ? '' : '-nojs'}`)

			// 3. The email, as the support team receives it.
			const mail = await waitForMail((m) => m.subject.includes(tag))
			expect(mail.subject).toBe(`[Contact] ${typed.subject}`)
			expect(mail.replyTo).toEqual([{ name: typed.name, address: typed.email }])
			expect(mail.to.map((a) => a.address)).toHaveLength(1)
			// Everything the visitor typed is escaped in the HTML part, never markup.
			expect(mail.html).toContain(`Invoice &lt;${tag}&gt; &amp; &quot;more&quot;`)
			expect(mail.html).toContain('Hello &lt;b&gt;crew&lt;/b&gt; &amp; friends,')
			expect(mail.html).toContain('Ada O&#39;Hara')
			expect(mail.html).not.toContain('<b>crew</b>')
			expect(mail.html).not.toContain(`<${tag}>`)
			// So is the plain-text part: the interface escapes every input in the body (decision 0024).
			expect(mail.text).toContain('Hello &lt;b&gt;crew&lt;/b&gt; &amp; friends,')
			expect(mail.text).not.toContain('<b>crew</b>')
			expect(mail.text).toContain(`Email: ${typed.email}`)

			if (javaScriptEnabled) {
				expectNoUnexpectedConsoleErrors(consoleErrors, {
					// The invalid submission is answered 400 on purpose (Chromium logs every 4xx).
					allow: [/status of 400 \(Bad Request\) \(at [^)]*\/contact[?.]/, CLERK_LOAD_FAILURE, ...expectedConsoleErrors],
				})
			}
		})
	})
}

test.describe('contact form while sending, JavaScript on', () => {
	skipWithoutBrowser()

	// Sends nothing: the send that is held is then cut off, as a dropped connection would be.
	test('screen readers hear that the message is on its way; the last failure is not claimed meanwhile', async ({
		page,
		expectedConsoleErrors,
	}) => {
		expectedConsoleErrors.push(/net::ERR_(INTERNET_DISCONNECTED|FAILED) \(at [^)]*\/contact\?_data=/)
		await page.goto('/contact')
		await settle(page)
		const f = fields(page)
		await f.name.fill('Ada Lovelace')
		await f.email.fill('ada@example.test')
		await f.subject.fill('Invoices')
		await f.message.fill('Where are my invoices?')
		const status = contactForm(page).locator('[aria-live="polite"]')
		const lost = page.getByRole('alert').filter({ hasText: 'We could not reach Callsheet' })
		await expect(status).toHaveText('')

		// A first send whose connection failed leaves its alert.
		await page.context().setOffline(true)
		await f.submit.click()
		await expect(lost).toBeFocused()
		await page.context().setOffline(false)

		// Sent again: while it is on its way the region says so, and the old failure is gone.
		let release = () => {}
		const held = new Promise<void>((resolve) => (release = resolve))
		await page.route(
			(url) => url.pathname === '/contact',
			async (route) => {
				if (route.request().method() !== 'POST') return route.fallback()
				await held
				return route.abort('failed')
			},
		)
		await f.submit.click()
		await expect(f.submit).toHaveText('Sending…')
		await expect(status).toHaveText('Sending your message…')
		await expect(lost).toHaveCount(0)
		await screenshotAtViewports(page, 'contact-sending')
		release()

		// That one failed too: the alert is back, focused, and the region is quiet again.
		await expect(lost).toBeFocused()
		await expect(status).toHaveText('')
		await expect(f.submit).toHaveText('Send message')
		await expect(f.message).toHaveValue('Where are my invoices?')
	})
})
