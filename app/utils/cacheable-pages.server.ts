import { isbot } from 'isbot'

/**
 * Pages whose render for a visitor without cookies depends only on the build, the configuration and
 * the URL: no database read, no clock, nothing per visitor, and no deferred data (a page streamed in
 * parts could be kept with a fallback in place of a part that failed). The production server keeps
 * such a render for a few seconds and sends it, with a fresh CSP nonce, to the next visitors without
 * cookies (server/page-cache.js, docs/decisions/0016-signed-out-page-cache.md). A page that starts
 * reading anything else for signed-out visitors must leave this list.
 */
const CACHEABLE_PAGES = new Set(['/', '/pricing', '/contact'])

/**
 * The query parameters those pages may be kept with (pricing's period and canceled checkout, contact's
 * confirmation). Any other parameter is rendered each time: Clerk's handshake parameters
 * (`__clerk_handshake`, `__clerk_handshake_nonce`) sign a visitor in without a cookie, the subject
 * another page suggests to the contact form (`subject`) differs with each request's reference, and a
 * query the pages ignore would only spread one page over many entries.
 */
const PAGE_PARAMETERS = new Set(['interval', 'checkout', 'sent'])

/** `search`: the query string after `?`, or '' (a listed page with its own parameters only). */
export function isCacheablePage(pathname: string, search: string): boolean {
	if (!CACHEABLE_PAGES.has(pathname)) return false
	if (search === '') return true
	for (const name of new URLSearchParams(search).keys()) if (!PAGE_PARAMETERS.has(name)) return false
	return true
}

/**
 * Crawlers and other non-browsers get the whole document at once, browsers get it streamed as it
 * renders (entry.server.tsx); the page cache keeps the two apart.
 */
export function wantsWholeDocument(userAgent: string | null | undefined): boolean {
	return isbot(userAgent ?? '')
}
