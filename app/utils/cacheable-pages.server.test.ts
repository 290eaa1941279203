import { describe, expect, test } from 'vitest'
import { isCacheablePage, wantsWholeDocument } from './cacheable-pages.server.ts'

describe('which page requests the signed-out page cache may answer', () => {
	test.each([
		// The listed pages, exactly, with the parameters they read.
		['/', '', true],
		['/pricing', '', true],
		['/pricing', 'interval=year', true],
		['/pricing', 'interval=month&checkout=canceled', true],
		['/contact', 'sent=1', true],
		// Not other pages or other spellings of these.
		['/account', '', false],
		['/sign-in', '', false],
		['/admin/deletion-requests', '', false],
		['/pricing/', '', false],
		['/PRICING', '', false],
		// Not any other parameter: Clerk's handshake parameters sign a visitor in without a cookie.
		['/pricing', '__clerk_handshake=eyJ', false],
		['/pricing', 'interval=year&__clerk_handshake_nonce=abc', false],
		['/pricing', '_data=routes%2Fpricing', false],
		['/contact', 'utm_source=newsletter', false],
		// A suggested subject is read, but rendered for each visitor: one page per request's reference.
		['/contact', 'subject=Delete+my+account', false],
		['/contact', 'sent=1&%73ubject=x', false],
	])('%s?%s → %s', (pathname, search, cacheable) => {
		expect(isCacheablePage(pathname, search)).toBe(cacheable)
	})

	test('crawlers are told apart from browsers', () => {
		expect(wantsWholeDocument('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toBe(true)
		expect(
			wantsWholeDocument('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'),
		).toBe(false)
	})
})
