import { afterEach, beforeEach } from 'vitest'
import { startedApps } from './app-server.ts'

// The house rule that console.error fails a test, for the app under test: it runs in a child process,
// so its errors reach only its log. Anything the app writes to stderr (console.error, console.warn,
// node's warnings) while a test runs fails that test, unless the test said it expects it with
// expectServerLog(): logging a fault the test simulates is behaviour; an unexpected line is a failure
// a 200 may hide (a fallback answer looks like a success). What a server writes while it starts
// (configuration notes, the identity SDK's deprecation notice) is not the test's doing.
// A failed request (the server's catch-all) or a stack trace fails the test even when expected.
const NEVER_EXPECTED = [/server: request failed/, /^\s+at .+:\d+:\d+\)?$/m]

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
		const errors = app.errorOutput().slice(Math.max(loggedErrors.get(app) ?? 0, app.startupErrorLength))
		const unexpected = errors.split('\n').filter((line) => line.trim() && !expected.some((pattern) => pattern.test(line)))
		if (unexpected.length > 0) {
			throw new Error(
				`the app under test logged to stderr during this test (expectServerLog() if it is meant to):\n${unexpected.slice(0, 20).join('\n')}`,
			)
		}
	}
})
