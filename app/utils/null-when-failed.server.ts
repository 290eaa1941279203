/**
 * The work's answer, or null when it failed, with `said(message)` logged. For a page that answers a
 * failure of ours in its own words ("try again"), where a throw was the generic error page.
 */
export async function nullWhenFailed<T>(work: Promise<T>, said: (message: string) => string): Promise<T | null> {
	try {
		return await work
	} catch (error) {
		console.error(said((error as Error).message))
		return null
	}
}
