/**
 * Pages whose render for a visitor without cookies depends only on the build, the configuration and
 * the URL: no database read, no clock, nothing per visitor. The production server keeps such a render
 * for a few seconds and sends it, with a fresh CSP nonce, to the next visitors without cookies
 * (server/page-cache.js, docs/decisions/0016-signed-out-page-cache.md). A page that starts reading
 * anything else for signed-out visitors must leave this list.
 */
const CACHEABLE_PAGES = new Set(['/', '/pricing', '/contact'])

export function isCacheablePage(pathname: string): boolean {
	return CACHEABLE_PAGES.has(pathname)
}
