import type { AppLoadContext } from '@remix-run/node'
import { useEffect } from 'react'

// The answer to a refused form has a <title> starting "Error: ", but Remix v2 passes `meta` the
// loader's data, never the action's (remix-run/remix#3534 was not merged). Without JavaScript that
// answer is one document request whose action and loaders share `context`: the action records the
// refusal there and the page's loader hands it to meta. With JavaScript the loaders revalidate in a
// request of their own, so the page sets the prefix itself (useErrorTitle).
const refusals = new WeakSet<AppLoadContext>()

/** In an action: this request's page answers a refused form. Returns `response`. */
export function recordRefusal<T>(context: AppLoadContext, response: T): T {
	refusals.add(context)
	return response
}

/** In a loader: whether this document answers a refused form (see recordRefusal). */
export function answersRefusal(context: AppLoadContext) {
	return refusals.has(context)
}

/** Keeps "Error: " at the start of document.title while `error`, after a submission made with JavaScript. */
export function useErrorTitle(error: boolean) {
	useEffect(() => {
		const title = document.title.replace(/^Error: /, '')
		document.title = error ? `Error: ${title}` : title
	})
}
