/**
 * Whether a pathname belongs to the JSON API. Remix matches routes case-insensitively, so `/API/health`
 * is the health route and `/api` itself falls to the API's catch-all: both are API paths, answered in
 * JSON, never with a page's HTML or text errors.
 */
export function isApiPath(pathname: string): boolean {
	return /^\/api(?:\/|$)/i.test(pathname)
}
