import type { HeadersFunction } from '@remix-run/node'

/** "about 45 seconds", "about 2 minutes": the 429 wait in words a person reads. */
export function waitInWords(seconds: number) {
	if (seconds < 60) return `about ${seconds} second${seconds === 1 ? '' : 's'}`
	const minutes = Math.ceil(seconds / 60)
	return `about ${minutes} minute${minutes === 1 ? '' : 's'}`
}

/** A page's `headers`: a document answer takes its headers from here, so pass an action's 429 Retry-After through. */
export const passRetryAfter: HeadersFunction = ({ actionHeaders }) => {
	const retryAfter = actionHeaders.get('Retry-After')
	return retryAfter ? { 'Retry-After': retryAfter } : new Headers()
}
