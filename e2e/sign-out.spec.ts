// Signing out from the account page, with JavaScript on and off: the session ends at the identity
// provider (the fake Clerk Backend API records the revocation), the browser's session cookies are
// gone, and the next signed-in page asks to sign in again.
import { registerClerkUser } from './support/control.ts'
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
} from './support/fixtures.ts'

for (const javaScriptEnabled of [true, false]) {
	const mode = javaScriptEnabled ? 'js' : 'nojs'

	test.describe(`sign out, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, () => {
		skipWithoutBrowser()
		test.use({ javaScriptEnabled })

		test('the account page signs the user out and the next visit is signed out', async ({ page, consoleErrors }) => {
			const userId = uniqueId(`user_e2e_sign_out_${mode}`)
			await registerClerkUser({ id: userId, email: `${userId}@example.test` })
			await signIn(page, userId)

			expect((await page.goto('/account'))?.status()).toBe(200)
			const signOut = page.getByRole('button', { name: 'Sign out' })
			await expect(signOut).toBeVisible()
			if (javaScriptEnabled) await settle(page)
			await expectNoSeriousA11yViolations(page, { javaScriptEnabled })
			await screenshotAtViewports(page, `account-sign-out${javaScriptEnabled ? '' : '-nojs'}`)

			await signOut.click()
			await expect(page).toHaveURL(/\/$/)
			await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' })).toBeVisible()
			const names = (await page.context().cookies()).map((cookie) => cookie.name)
			expect(names).not.toContain('__session')
			expect(names).not.toContain('__client_uat')
			await page.goto('/account')
			await expect(page).toHaveURL(/\/sign-in\?redirect_url=%2Faccount$/)
			expectNoUnexpectedConsoleErrors(consoleErrors, { allow: [CLERK_LOAD_FAILURE] })
		})
	})
}
