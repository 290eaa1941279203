/**
 * `work`'s outcome, or the error `timedOut` makes if it has not settled within `ms`: for calls to an
 * outside service that may hang. The work itself goes on; only the wait for it ends.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
	let timer: NodeJS.Timeout | undefined
	const deadline = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(timedOut()), ms)
	})
	return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}
