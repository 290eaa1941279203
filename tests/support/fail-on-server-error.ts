import { afterEach, beforeEach } from 'vitest'
import { startedApps } from './app-server.ts'

// The house rule that console.error fails a test, for the app under test: it runs in a child process,
// so its errors reach only its log. Anything the app writes to stderr (console.error, console.warn,
// node's warnings) while a test runs fails that test, unless the test said it expects it with
// expectServerLog(): logging a fault the test simulates is behaviour; an unexpected line is a failure
// a 200 may hide (a fallback answer looks like a success). What a server writes while it starts is
// checked once, against the notes a start may print (its configuration warnings, the identity SDK's
// deprecation notice), and fails the first test after it otherwise.
// A failed request (the server's catch-all) or a stack trace fails the test even when expected.
const NEVER_EXPECTED = [/server: request failed/, /^\s+at .+:\d+:\d+\)?$/m]
const START_UP_NOTES = [
	/^warning: /,
	/^Clerk - DEPRECATION WARNING: @clerk\/remix is now in maintenance mode\.$/,
	/^@clerk\/remix will only receive security updates\./,
	/^Please migrate to @clerk\/react-router for continued development/,
	/^Migration guide: https:\/\/reactrouter\.com\//,
	/^React Router SDK: https:\/\/clerk\.com\//,
]
const startUpChecked = new WeakSet<object>()

const unmatched = (text: string, patterns: RegExp[]) =>
	text.split('\n').filter((line) => line.trim() && !patterns.some((pattern) => pattern.test(line)))

let expected: RegExp[] = []
let logged = new Map<object, number>()
let loggedErrors = new Map<object, number>()

/** The lines this test makes the app log on purpose (each stderr line must match one of them). */
export function expectServerLog(...patterns: RegExp[]) {
	expected.push(...patterns)
}

beforeEach(() => {
	expected = []
	logged = new Map(startedApps.map((app) => [app, app.output().length]))
	loggedErrors = new Map(startedApps.map((app) => [app, app.errorOutput().length]))
})

afterEach(() => {
	for (const app of startedApps) {
		const fresh = app.output().slice(logged.get(app) ?? 0)
		const mark = NEVER_EXPECTED.find((pattern) => pattern.test(fresh))
		if (mark) throw new Error(`the app under test logged an unexpected error during this test:\n${fresh.slice(-4_000)}`)
		if (!startUpChecked.has(app)) {
			startUpChecked.add(app)
			// A test may start an app whose start-up it makes say something on purpose (expectServerLog).
			const unexpectedAtStart = unmatched(app.errorOutput().slice(0, app.startupErrorLength), [...START_UP_NOTES, ...expected])
			if (unexpectedAtStart.length > 0) {
				throw new Error(`the app under test logged to stderr while starting:\n${unexpectedAtStart.slice(0, 20).join('\n')}`)
			}
		}
		const errors = app.errorOutput().slice(Math.max(loggedErrors.get(app) ?? 0, app.startupErrorLength))
		const unexpected = unmatched(errors, expected)
		if (unexpected.length > 0) {
			throw new Error(
				`the app under test logged to stderr during this test (expectServerLog() if it is meant to):\n${unexpected.slice(0, 20).join('\n')}`,
			)
		}
	}
})
