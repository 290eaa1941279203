import type { HeadersFunction } from '@remix-run/node'

/**
 * "about 45 seconds", "about a minute", "about 2 minutes": the 429 wait in words a person reads.
 * Past 45 seconds a count of seconds ("about 59 seconds") is more exact than anyone waits by.
 */
export function waitInWords(seconds: number) {
	if (seconds <= 45) return `about ${seconds} second${seconds === 1 ? '' : 's'}`
	if (seconds <= 90) return 'about a minute'
	return `about ${Math.ceil(seconds / 60)} minutes`
}

/** A page's `headers`: a document answer takes its headers from here, so pass an action's 429 Retry-After through. */
export const passRetryAfter: HeadersFunction = ({ actionHeaders }) => {
	const retryAfter = actionHeaders.get('Retry-After')
	return retryAfter ? { 'Retry-After': retryAfter } : new Headers()
}
