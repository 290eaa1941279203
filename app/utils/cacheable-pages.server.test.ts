import { describe, expect, test } from 'vitest'
import { isCacheablePage, wantsWholeDocument } from './cacheable-pages.server.ts'

describe('which page requests the signed-out page cache may answer', () => {
	test('the listed pages, exactly, with the parameters they read', () => {
		for (const [pathname, search] of [
			['/', ''],
			['/pricing', ''],
			['/pricing', 'interval=year'],
			['/pricing', 'interval=month&checkout=canceled'],
			['/contact', 'sent=1'],
		] as const) {
			expect(isCacheablePage(pathname, search), `${pathname}?${search}`).toBe(true)
		}
	})

	test('not other pages, other spellings, or any other parameter (Clerk signs visitors in by query)', () => {
		for (const [pathname, search] of [
			['/account', ''],
			['/sign-in', ''],
			['/admin/deletion-requests', ''],
			['/pricing/', ''],
			['/PRICING', ''],
			['/pricing', '__clerk_handshake=eyJ'],
			['/pricing', 'interval=year&__clerk_handshake_nonce=abc'],
			['/pricing', '_data=routes%2Fpricing'],
			['/contact', 'utm_source=newsletter'],
		] as const) {
			expect(isCacheablePage(pathname, search), `${pathname}?${search}`).toBe(false)
		}
	})

	test('crawlers are told apart from browsers', () => {
		expect(wantsWholeDocument('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toBe(true)
		expect(
			wantsWholeDocument('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'),
		).toBe(false)
	})
})
