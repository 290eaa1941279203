// Some failures come once per request, sent by any client or repeated through an outage: a line each
// would let a client fill the log and bury the one line an operator needs. Such a failure is noted
// when first seen, then at most once a minute with how many there were since the last note.

const NOTE_INTERVAL_MS = 60_000

/**
 * Returns the function to call on each occurrence. `write` runs on the first, then at most once a
 * minute, with the count since the last note (this occurrence included) and this occurrence's details.
 */
export function noteOncePerMinute<Details extends unknown[]>(write: (count: number, ...latest: Details) => void) {
	let count = 0
	let notedAt = -Infinity
	return (...latest: Details) => {
		count++
		const now = Date.now()
		if (now - notedAt < NOTE_INTERVAL_MS) return
		write(count, ...latest)
		count = 0
		notedAt = now
	}
}

/** What a client may shape, as a log line shows it: no control characters (a newline would forge a line), and short. */
export const printableForLog = (value: string, maxLength: number) => value.replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, maxLength)
