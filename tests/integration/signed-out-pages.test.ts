import { describe, expect, test } from 'vitest'
import { app, auth, serveBillingApp, subscribedUser } from '../support/billing-app.ts'

// Visitors without cookies may be answered from the server's signed-out page cache
// (docs/decisions/0016-signed-out-page-cache.md): what they get must be what a render would give them,
// with a nonce of their own, and nobody else may get their page or they someone else's.
serveBillingApp()

const SIGNED_OUT_NOTE = 'You need a Callsheet account to start a free trial'

async function page(path: string, headers: Record<string, string> = {}) {
	const response = await fetch(`${app.url}${path}`, { headers: { Accept: 'text/html', ...headers } })
	const html = await response.text()
	const nonce = /'nonce-([^']+)'/.exec(response.headers.get('content-security-policy') ?? '')?.[1]
	expect(nonce, path).toBeTruthy()
	return { response, html, nonce: nonce! }
}

/** The page with its nonce taken out: two answers for the same visitor and URL must then be equal. */
function withoutNonce({ html, nonce }: { html: string; nonce: string }) {
	const scriptNonces = [...html.matchAll(/nonce="([^"]*)"/g)].map((match) => match[1])
	// Every script the page carries names this response's nonce, and the CSP header names it too.
	expect(scriptNonces.length).toBeGreaterThan(0)
	expect(new Set(scriptNonces)).toEqual(new Set([nonce]))
	return html.split(nonce).join('NONCE')
}

describe('pages for visitors without cookies', () => {
	test.each(['/', '/pricing', '/pricing?interval=year', '/contact', '/contact?sent=1'])(
		'%s: each answer has its own nonce, and is the page a render gives a signed-out visitor',
		async (path) => {
			const crawler = { 'User-Agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' }
			const answers = [await page(path), await page(path), await page(path), await page(path, crawler), await page(path, crawler)]
			// A visitor carrying some cookie but no session is signed out too, and their page is rendered.
			const rendered = await page(path, { Cookie: 'theme=dark' })
			expect(new Set(answers.map((answer) => answer.nonce)).size).toBe(answers.length)
			for (const answer of answers) {
				expect(answer.response.status).toBe(200)
				expect(answer.response.headers.get('content-type')).toBe('text/html; charset=utf-8')
				expect(Number(answer.response.headers.get('content-length'))).toBe(Buffer.byteLength(answer.html))
				expect(answer.response.headers.get('x-frame-options')).toBe('DENY')
				expect(withoutNonce(answer)).toBe(withoutNonce(rendered))
			}
		},
	)

	test('robots.txt keeps search engines to the public pages', async () => {
		const response = await fetch(`${app.url}/robots.txt`)
		expect(response.status).toBe(200)
		expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8')
		const rules = (await response.text()).split('\n').filter((line) => line.startsWith('Disallow:'))
		const refused = (path: string) => rules.some((rule) => path.startsWith(rule.slice('Disallow:'.length).trim()))
		for (const path of ['/', '/pricing', '/pricing?interval=year', '/contact']) expect(refused(path), path).toBe(false)
		for (const path of ['/api/health', '/api/contact', '/account', '/admin/deletion-requests', '/sign-in', '/sign-out'])
			expect(refused(path), path).toBe(true)
	})

	test('HEAD is answered as before: the headers of the page, no body', async () => {
		await page('/pricing')
		const response = await fetch(`${app.url}/pricing`, { method: 'HEAD' })
		expect(response.status).toBe(200)
		expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
		expect(response.headers.get('content-security-policy')).toMatch(/'nonce-[^']+'/)
		expect(await response.text()).toBe('')
	})

	test('the query is part of the page: the yearly and monthly prices, the sent confirmation', async () => {
		const month = await page('/pricing?interval=month')
		const year = await page('/pricing?interval=year')
		expect(month.html).toMatch(/<a aria-current="page" data-discover="true" href="\/pricing\?interval=month">/)
		expect(year.html).toMatch(/<a aria-current="page" data-discover="true" href="\/pricing\?interval=year">/)
		expect(year.html).toContain('Two months free compared with monthly')
		expect(month.html).not.toContain('Two months free compared with monthly')
		expect((await page('/contact?sent=1')).html).toContain('Message sent')
		expect((await page('/contact')).html).not.toContain('Message sent')
	})

	test("a subject suggested by another page's link is filled in for each visitor; one that would not pass as a subject is not", async () => {
		// The field itself, so that "no value" below cannot pass on a page without the form.
		const subjectField = (html: string) => {
			const field = /<input[^>]*name="subject"[^>]*>/.exec(html)?.[0]
			expect(field, 'the subject field').toBeDefined()
			return field!
		}
		const keep = 'Keep my account (deletion request 3f0c7a2e-1b4d-4e8a-9c61-2d5e7f8a9b0c)'
		for (const [suggested, shown] of [
			[keep, keep],
			['Delete my account', 'Delete my account'],
			['  <b>Refund</b> & co  ', '&lt;b&gt;Refund&lt;/b&gt; &amp; co'],
		]) {
			const field = subjectField((await page(`/contact?${new URLSearchParams({ subject: suggested! })}`)).html)
			expect(field, suggested).toContain(`value="${shown}"`)
		}
		for (const refused of ['', '   ', 'x'.repeat(501), 'line\nbreak', 'nul\u0000']) {
			expect(
				subjectField((await page(`/contact?${new URLSearchParams({ subject: refused })}`)).html),
				JSON.stringify(refused),
			).not.toContain('value=')
		}
		expect(subjectField((await page('/contact')).html)).not.toContain('value=')
	})

	test('a signed-in user is never given the visitors’ page, nor visitors theirs', async () => {
		await page('/pricing?interval=year')
		const { userId } = await subscribedUser('team', 'year')
		const theirs = await page('/pricing?interval=year', auth(userId))
		expect(theirs.html).toContain('Your plan')
		expect(theirs.html).not.toContain(SIGNED_OUT_NOTE)
		const visitors = await page('/pricing?interval=year')
		expect(visitors.html).toContain(SIGNED_OUT_NOTE)
		expect(visitors.html).not.toContain('Your plan')
	})
})
