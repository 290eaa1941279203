import { afterEach, beforeEach } from 'vitest'
import { startedApps } from './app-server.ts'

// The house rule that console.error fails a test, for the app under test: it runs in a child process,
// so its errors reach only its log. A request that failed unexpectedly (the server's catch-all) or a
// stack trace in the log fails the test that caused it. Errors the app logs on purpose while answering
// a simulated fault ("billing: checkout … failed") are its behaviour, not a failure: they have neither
// mark.
const UNEXPECTED = [/server: request failed/, /^\s+at .+:\d+:\d+\)?$/m]

let logged = new Map<object, number>()

beforeEach(() => {
	logged = new Map(startedApps.map((app) => [app, app.output().length]))
})

afterEach(() => {
	for (const app of startedApps) {
		const fresh = app.output().slice(logged.get(app) ?? 0)
		const mark = UNEXPECTED.find((pattern) => pattern.test(fresh))
		if (mark) throw new Error(`the app under test logged an unexpected error during this test:\n${fresh.slice(-4_000)}`)
	}
})
