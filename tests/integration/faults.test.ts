import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { withDatabase } from '../support/database.ts'
import { postJson } from '../support/http.ts'
import { runPrismaMigrateDeploy } from '../../app/utils/db/migrate.server.ts'
import { createDatabase, startTestPostgres, type TestPostgres } from '../support/postgres.ts'
import { projectRoot } from '../support/project.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

// The database server dies and comes back while the app keeps running: the app answers the contract's
// errors (or the status fallback) meanwhile, recovers without a restart, and loses nothing it accepted.
// PostgreSQL only, on a cluster of its own so other test files are not disturbed.
describe.runIf(inject('databaseKind') === 'postgres')('PostgreSQL stopped and restarted under the app', () => {
	let postgres: TestPostgres
	let standIns: StandIns
	let app: RunningApp
	let databaseUrl: string

	beforeAll(async () => {
		postgres = await startTestPostgres({ durable: true })
		await createDatabase(postgres.adminUrl, 'faults')
		databaseUrl = postgres.url('faults')
		await runPrismaMigrateDeploy({ projectRoot, query: async () => ({ rows: [] }), databaseUrl })
		standIns = await startStandIns()
		app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env })
	})
	afterAll(async () => {
		await app?.stop()
		await standIns?.close()
		await postgres?.stop()
	})

	function newUser() {
		const id = newClerkUserId()
		standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
		return id
	}
	const file = (id: string) =>
		postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${id}@example.com` }, sessionHeaders(standIns.clerk, id))

	test('answers with contract errors while down, recovers without a restart, and loses nothing accepted', async () => {
		const users = Array.from({ length: 60 }, newUser)
		const subscriber = newUser()
		expect((await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, sessionHeaders(standIns.clerk, subscriber))).status).toBe(
			200,
		)

		const accepted = new Set<string>()
		const record = async (id: string) => {
			const response = await file(id)
			const body = await response.json()
			if (response.status === 200) {
				expect(body.saved).toBe(true)
				accepted.add(body.request_id)
			} else {
				expect([500, 503]).toContain(response.status)
				expect(body.code).toMatch(/^(db-error|server-error|identity-provider-unavailable)$/)
			}
		}

		// A storm of filings, with the database killed in the middle of it.
		const storm = Promise.all(users.slice(0, 30).map((id, i) => new Promise((r) => setTimeout(r, i * 15)).then(() => record(id))))
		await new Promise((r) => setTimeout(r, 150))
		postgres.kill()
		await storm

		// While it is down: the status fallback, and the contract's errors elsewhere.
		const status = await fetch(`${app.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, subscriber) })
		expect(status.status).toBe(200)
		expect(await status.json()).toEqual({
			plan: 'free',
			status: 'none',
			credits_daily: 20,
			current_period_end: null,
			processor_customer_id: null,
			has_subscription: false,
		})
		const down = await file(users[40]!)
		expect(down.status).toBe(500)
		expect(await down.json()).toMatchObject({ code: 'db-error' })
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)

		// It comes back; the app recovers by itself.
		await postgres.start()
		const deadline = Date.now() + 20_000
		let recovered = false
		while (!recovered && Date.now() < deadline) {
			const state = await (await fetch(`${app.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, subscriber) })).json()
			recovered = state.processor_customer_id !== null
			if (!recovered) await new Promise((r) => setTimeout(r, 250))
		}
		expect(recovered).toBe(true)
		await Promise.all(users.slice(30, 60).map(record))

		const stored = await withDatabase(databaseUrl, (prisma) => prisma.deletionRequest.findMany({ select: { id: true } }))
		const storedIds = new Set(stored.map((row) => row.id))
		for (const id of accepted) expect(storedIds.has(id)).toBe(true)
		expect(accepted.size).toBeGreaterThanOrEqual(30)
	})
})
