// The site header on narrow phones. Where brand and navigation fit side by side (360 px and up, also
// signed in with the longer "Account") they share one row; narrower, they take two deliberate rows:
// the brand with room above it, the navigation under it on the same left edge. Never an edge-hugging
// brand, never a link past the right margin.
import type { Page } from '@playwright/test'
import { expect, signIn, skipWithoutBrowser, test } from './support/fixtures.ts'

type Box = { left: number; right: number; top: number; bottom: number }

async function headerBoxes(page: Page) {
	return page.evaluate(() => {
		const box = (selector: string) => {
			const r = document.querySelector(selector)!.getBoundingClientRect()
			return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }
		}
		const links = [...document.querySelectorAll('.nav a')].map((a) => a.getBoundingClientRect().right)
		return { header: box('.site-header'), brand: box('.brand'), nav: box('.nav'), lastLinkRight: Math.max(...links) }
	})
}

const middle = (box: Box) => (box.top + box.bottom) / 2

const cases = [
	{ width: 414, signedIn: true, rows: 1 },
	{ width: 375, signedIn: true, rows: 1 },
	{ width: 360, signedIn: true, rows: 1 },
	{ width: 320, signedIn: true, rows: 2 },
	{ width: 320, signedIn: false, rows: 2 },
] as const

for (const { width, signedIn, rows } of cases) {
	test.describe(`header at ${width} px, signed ${signedIn ? 'in' : 'out'}`, () => {
		skipWithoutBrowser()
		test.use({ viewport: { width, height: 640 }, javaScriptEnabled: false })

		test(`${rows === 1 ? 'one row' : 'two rows'}, with room at every edge`, async ({ page }) => {
			if (signedIn) await signIn(page, `user_e2e_header_${width}`)
			await page.goto('/')
			await expect(
				page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: signedIn ? 'Account' : 'Sign in' }),
			).toBeVisible()
			const { header, brand, nav, lastLinkRight } = await headerBoxes(page)
			expect(brand.left, 'brand from the left edge').toBeGreaterThanOrEqual(16)
			expect(lastLinkRight, 'last link from the right edge').toBeLessThanOrEqual(width - 16)
			expect(brand.top - header.top, 'brand from the top edge').toBeGreaterThanOrEqual(10)
			if (rows === 1) {
				expect(Math.abs(middle(brand) - middle(nav)), 'brand and navigation on one line').toBeLessThan(4)
				expect(header.bottom - header.top, 'header height').toBeLessThanOrEqual(66)
			} else {
				expect(nav.top, 'navigation under the brand').toBeGreaterThanOrEqual(brand.bottom)
				expect(nav.left, 'navigation on the brand’s left edge').toBe(brand.left)
				expect(header.bottom - nav.bottom, 'room under the navigation').toBeGreaterThanOrEqual(4)
				expect(header.bottom - header.top, 'header height').toBeLessThanOrEqual(96)
			}
			await page.screenshot({
				path: `e2e/screenshots/header-${width}-signed-${signedIn ? 'in' : 'out'}.png`,
				clip: { x: 0, y: 0, width, height: 140 },
			})
		})
	})
}

test.describe('header at 320 px with text at 200 %', () => {
	skipWithoutBrowser()
	// With JavaScript: the larger text is injected as a style tag, which waits on the page's scripts.
	test.use({ viewport: { width: 320, height: 640 } })

	test('the links stack as a list under the brand, with nothing past the right edge', async ({ page }) => {
		await signIn(page, 'user_e2e_header_text_200')
		await page.goto('/contact')
		await page.addStyleTag({ content: 'html { font-size: 200%; }' })
		const links = page.getByRole('navigation', { name: 'Main' }).getByRole('link')
		await expect(links.last()).toBeVisible()
		const boxes = await links.evaluateAll((elements) =>
			elements.map((a) => {
				const r = a.getBoundingClientRect()
				return { top: r.top, bottom: r.bottom, right: r.right }
			}),
		)
		// Each on a line of its own at this size; a whole gap apart each, they took 60 % of the screen.
		for (let i = 1; i < boxes.length; i++) {
			expect(boxes[i]!.top - boxes[i - 1]!.bottom, `space above link ${i + 1}`).toBeLessThanOrEqual(12)
		}
		expect(Math.max(...boxes.map((box) => box.right)), 'last link from the right edge').toBeLessThanOrEqual(320)
		expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320)
		await page.screenshot({ path: 'e2e/screenshots/header-320-text-200.png', clip: { x: 0, y: 0, width: 320, height: 400 } })
	})
})
