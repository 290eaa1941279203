// Any page address without a route of its own. Without this route Remix answers the 404 before any
// loader runs, so the root's error page had no root data and showed a signed-in visitor "Sign in".
// Matching here runs the root loader first; the thrown 404 then renders the root's ErrorBoundary
// with the root's data in place (the Epic Stack's routes/$.tsx does the same).
// API paths never reach it: api.$.ts answers them in JSON.
const notFound = () => {
	throw new Response('Not found', { status: 404 })
}

export const loader = notFound
export const action = notFound

// Never rendered (the loader always throws), but a route without a component would be a resource
// route, whose thrown response goes out as it is instead of as the error page.
export default function NotFound() {
	return null
}
