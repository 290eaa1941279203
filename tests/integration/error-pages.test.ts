import { describe, expect, test } from 'vitest'
import { app, serveBillingApp, standIns } from '../support/billing-app.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

// A page form the server refuses by throwing (too long, not url-encoded, unreadable, not theirs) is
// answered with the error page. Without JavaScript that page is the whole answer: its header must be
// the signed-in user's (Account), as every other page's is, not a visitor's (Sign in).
// (The app and stand-ins of the billing files: pricing and account are among these pages.)
serveBillingApp()

const FORM = 'application/x-www-form-urlencoded'

const REFUSALS = [
	// 300 KiB: over the page forms' 256 KiB.
	{ path: '/contact', status: 413, type: FORM, body: `message=${'x'.repeat(300 * 1024)}`, heading: 'That form was too long' },
	{ path: '/account', status: 415, type: 'text/plain', body: 'intent=portal', heading: 'We could not accept that request' },
	{ path: '/pricing', status: 400, type: FORM, body: 'intent=%FF', heading: 'We could not accept that request' },
	// Not an administrator: there is no such page for them.
	{ path: '/admin/deletion-requests', status: 404, type: FORM, body: 'intent=withdraw', heading: 'Page not found' },
]

async function post(path: string, type: string, body: string, headers: Record<string, string>) {
	const response = await fetch(`${app.url}${path}`, {
		method: 'POST',
		redirect: 'manual',
		headers: { 'Content-Type': type, Accept: 'text/html', Origin: app.url, ...headers },
		body,
	})
	return { status: response.status, html: await response.text() }
}

const nav = (html: string) => html.slice(html.indexOf('<nav aria-label="Main"'), html.indexOf('</nav>'))

describe('the error page after a refused form post, without JavaScript', () => {
	test.each(REFUSALS)(
		'$path answers $status with the error page, and a signed-in user still has Account in the header',
		async (refusal) => {
			const { status, html } = await post(refusal.path, refusal.type, refusal.body, sessionHeaders(standIns.clerk, newClerkUserId()))
			expect(status).toBe(refusal.status)
			expect(html).toContain(`<title>${refusal.heading} · Callsheet</title>`)
			expect(html).toContain(`<h1 tabindex="-1">${refusal.heading}</h1>`)
			expect(html).toContain('<a href="/">Go to the home page</a> or <a href="/contact">contact support</a>.')
			expect(nav(html)).toContain('href="/account"')
			expect(nav(html)).not.toContain('href="/sign-in"')
		},
	)

	test('a visitor gets the same page, with Sign in', async () => {
		const { status, html } = await post('/contact', FORM, 'message=%FF', {})
		expect(status).toBe(400)
		expect(html).toContain('<title>We could not accept that request · Callsheet</title>')
		expect(nav(html)).toContain('href="/sign-in"')
		expect(nav(html)).not.toContain('href="/account"')
	})
})
