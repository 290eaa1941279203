import type { MetaFunction } from '@remix-run/node'
import { isRouteErrorResponse, useRouteError } from '@remix-run/react'
import { useEffect, useRef } from 'react'
import { useHydrated } from '#app/utils/hydrated.ts'
import { isNetworkFailure } from '#app/utils/network-failure.ts'
import { pageMeta } from '#app/utils/page-meta.ts'

/**
 * An error page that replaces the page in place (a form posted with JavaScript and refused outright:
 * too long, a server fault) keeps its address, so the root's focus-on-navigation does not move focus,
 * and nothing is announced but the title: its heading takes focus. Not when the error page is the
 * page loaded (false while hydrating): a screen reader starts a new page at its top anyway.
 */
function useFocusWhenShownAfterLoad() {
	const shownAfterLoad = useRef(useHydrated())
	const heading = useRef<HTMLHeadingElement>(null)
	useEffect(() => {
		if (shownAfterLoad.current) heading.current?.focus()
	}, [])
	return heading
}

/** What went wrong, in words that say whether trying again can help. */
function errorCopy(error: unknown): { heading: string; message: string } {
	// A page's data that could not be fetched (with JavaScript): the connection, not the server.
	if (isNetworkFailure(error))
		return { heading: 'Callsheet could not be reached', message: 'Check your connection, then reload this page or go back.' }
	const status = isRouteErrorResponse(error) ? error.status : 500
	if (status === 404) return { heading: 'Page not found', message: 'There is nothing at this address. Check it for typing mistakes.' }
	if (status === 413) {
		return {
			heading: 'That form was too long',
			message:
				'What you sent is longer than we accept, so sending it again as it is will not work. Go back, shorten your text, and send it again.',
		}
	}
	if (status >= 400 && status < 500) {
		return {
			heading: 'We could not accept that request',
			message:
				'Something in what was sent is not in a form we accept, so sending it again as it is will not work. Go back, check what you entered, and try again.',
		}
	}
	return { heading: 'Something went wrong', message: 'The problem is on our side, not in what you did. Please try again in a moment.' }
}

/** The error page's title and description, which follow the error. */
export function errorPageMeta(error: unknown) {
	const { heading, message } = errorCopy(error)
	return pageMeta(heading, message)
}

/**
 * A page's `meta` that gives way to the error page's when the page is its ErrorBoundary: in Remix v2
 * the deepest route's meta is the document's, and the page's own title would head the error page.
 */
export function orErrorPageMeta<Loader>(meta: MetaFunction<Loader>): MetaFunction<Loader> {
	return (args) => (args.error ? errorPageMeta(args.error) : meta(args))
}

/**
 * The error page, as the root's ErrorBoundary and as the ErrorBoundary of the pages with forms. When
 * a page's action throws (413, 415, 400, a fault), Remix renders the nearest boundary and runs only the
 * loaders above it: at the root, the root loader did not run, and without JavaScript a signed-in user
 * saw "Sign in" in the header. A page's own boundary keeps the root's loader, hence its header.
 */
export function ErrorPage() {
	const { heading, message } = errorCopy(useRouteError())
	const headingRef = useFocusWhenShownAfterLoad()
	return (
		<div className="stack">
			<h1 ref={headingRef} tabIndex={-1}>
				{heading}
			</h1>
			<p className="lead">
				{message} <a href="/">Go to the home page</a> or <a href="/contact">contact support</a>.
			</p>
		</div>
	)
}
