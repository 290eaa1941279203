/**
 * Waits for `promise`, but fails after `ms` with a message naming what never happened: a wait on the
 * app under test must end in a failure the test's `finally` can clean up after, never in a hang that
 * only the runner's timeout stops (which skips the clean-up and leaves servers running).
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined
	const expired = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
	})
	try {
		return await Promise.race([promise, expired])
	} finally {
		clearTimeout(timer)
	}
}

/** Polls `condition` every 20 ms until it holds; fails after `ms`. */
export async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
	const deadline = Date.now() + ms
	while (!condition()) {
		if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
		await new Promise((resolve) => setTimeout(resolve, 20))
	}
}
