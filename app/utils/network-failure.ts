import type { ShouldRevalidateFunction } from '@remix-run/react'

/**
 * A request the browser could not make or finish (offline, the connection dropped, a proxy cut it):
 * fetch rejects with a TypeError whose words are the browser's own (Chrome "Failed to fetch", Firefox
 * "NetworkError when attempting to fetch resource.", Safari "Load failed"). Not an abort (a newer
 * navigation), which is an AbortError.
 */
export function isNetworkFailure(error: unknown): boolean {
	return error instanceof TypeError && BROWSER_NETWORK_FAILURE.test(error.message)
}

// The browsers' own words only: a TypeError of ours that mentions "network" is a bug, not an outage.
const BROWSER_NETWORK_FAILURE =
	/^(Failed to fetch|NetworkError when attempting to fetch resource|Load failed|network error|The network connection was lost|The Internet connection appears to be offline)/i

/** The answer a clientAction gives when the form never reached the server (keepTypedOnNetworkFailure). */
export type Unsent = { unsent: true }

/**
 * A route's shouldRevalidate (root and the pages with such a clientAction): after an unsent form the
 * connection is down, and reloading the page's data would fail too, replacing the kept form with the
 * error page. Nothing changed on the server, so there is nothing to reload.
 */
export const keepPageWhenUnsent: ShouldRevalidateFunction = ({ actionResult, defaultShouldRevalidate }) =>
	(actionResult as Partial<Unsent> | undefined)?.unsent === true ? false : defaultShouldRevalidate

/**
 * For a page's clientAction: the server's answer, or, when the connection failed on the way, the
 * page's own answer built from what was typed (`keep`). With JavaScript a form is posted by fetch, and
 * that failure replaced the page with the error page, taking the typed text with it (without
 * JavaScript the browser's own error page keeps the form behind Back).
 */
export async function keepTypedOnNetworkFailure<Answer, Kept>(
	request: Request,
	serverAction: () => Promise<Answer>,
	keep: (typed: FormData) => Kept,
): Promise<Answer | (Kept & Unsent)> {
	// Read from a copy first: serverAction sends the request's own body.
	const typed = await request.clone().formData()
	try {
		return await serverAction()
	} catch (error) {
		if (!isNetworkFailure(error)) throw error
		return { ...keep(typed), unsent: true }
	}
}
