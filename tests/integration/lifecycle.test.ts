import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, inject, test } from 'vitest'
import { startStandIns } from '../mocks/serve-all.ts'
import { startApp } from '../support/app-server.ts'
import { freshDatabaseUrl, withDatabase } from '../support/database.ts'
import { postJson } from '../support/http.ts'
import { createDatabase } from '../support/postgres.ts'
import { projectRoot } from '../support/project.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

describe('graceful shutdown', () => {
	test('SIGTERM during load: every request answered 200 is stored, and the server exits cleanly', async () => {
		const standIns = await startStandIns()
		const databaseUrl = await freshDatabaseUrl()
		const app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env })
		try {
			const users = Array.from({ length: 80 }, () => {
				const id = newClerkUserId()
				standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
				return id
			})
			const accepted: string[] = []
			let refused = 0
			let firstAccepted: () => void = () => {}
			const loadUnderway = new Promise<void>((resolve) => (firstAccepted = resolve))
			const load = Promise.all(
				users.map(async (id, i) => {
					await new Promise((r) => setTimeout(r, i * 10))
					try {
						const response = await postJson(
							`${app.url}/api/account/delete-request`,
							{ confirmEmail: `${id}@example.com` },
							sessionHeaders(standIns.clerk, id),
						)
						if (response.status === 200) {
							accepted.push((await response.json()).request_id)
							firstAccepted()
						} else expect(response.status).toBeGreaterThanOrEqual(500)
					} catch {
						refused++ // the server had stopped accepting: nothing was accepted, nothing to lose
					}
				}),
			)
			// SIGTERM once the server is visibly busy: requests are in flight and more keep coming.
			await loadUnderway
			const exitCode = app.stop()
			await load
			expect(await exitCode).toBe(0)
			expect(app.output()).toMatch(/SIGTERM: finishing in-flight requests/)
			expect(accepted.length).toBeGreaterThan(0)
			const stored = new Set(
				(await withDatabase(databaseUrl, (prisma) => prisma.deletionRequest.findMany({ select: { id: true } }))).map((r) => r.id),
			)
			for (const id of accepted) expect(stored.has(id)).toBe(true)
			expect(accepted.length + refused).toBeLessThanOrEqual(users.length)
		} finally {
			await app.stop()
			await standIns.close()
		}
	})
})

describe.runIf(inject('databaseKind') === 'postgres')('start-up on PostgreSQL', () => {
	test('two instances starting together on an empty database migrate once and both serve', async () => {
		const name = `empty_${Date.now()}`
		await createDatabase(inject('postgresAdminUrl'), name)
		const databaseUrl = inject('postgresAdminUrl').replace(/\/postgres$/, `/${name}`)
		const [first, second] = await Promise.all([
			startApp({ DATABASE_URL: databaseUrl }, { timeoutMs: 90_000 }),
			startApp({ DATABASE_URL: databaseUrl }, { timeoutMs: 90_000 }),
		])
		try {
			for (const app of [first, second]) expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
			const migrations = await withDatabase(databaseUrl, (prisma) =>
				prisma.$queryRawUnsafe<Array<{ migration_name: string; finished_at: Date | null }>>(
					'SELECT migration_name, finished_at FROM _prisma_migrations',
				),
			)
			expect(migrations).toHaveLength(1)
			expect(migrations[0]!.finished_at).not.toBeNull()
		} finally {
			await Promise.all([first.stop(), second.stop()])
		}
	}, 120_000)

	test('a second instance starting while the first serves load: no request fails, nothing migrates twice, both serve', async () => {
		const standIns = await startStandIns()
		const name = `rolling_${Date.now()}`
		await createDatabase(inject('postgresAdminUrl'), name)
		const databaseUrl = inject('postgresAdminUrl').replace(/\/postgres$/, `/${name}`)
		const first = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env }, { timeoutMs: 90_000 })
		let second: Awaited<ReturnType<typeof startApp>> | undefined
		try {
			const fileRequest = async (url: string) => {
				const id = newClerkUserId()
				standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
				const response = await postJson(
					`${url}/api/account/delete-request`,
					{ confirmEmail: `${id}@example.com` },
					sessionHeaders(standIns.clerk, id),
				)
				return { status: response.status, body: (await response.json()) as { request_id?: string } }
			}
			const statuses: number[] = []
			const accepted: string[] = []
			let loading = true
			const worker = async () => {
				while (loading) {
					const { status, body } = await fileRequest(first.url)
					statuses.push(status)
					if (status === 200) accepted.push(body.request_id!)
				}
			}
			const load = Promise.all([worker(), worker(), worker()])
			while (accepted.length < 10) await new Promise((r) => setTimeout(r, 20))

			// Starts (and looks for pending migrations) while the first keeps answering.
			second = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env }, { timeoutMs: 90_000 })
			const duringStart = statuses.length
			const fromSecond = await fileRequest(second.url)
			loading = false
			await load

			expect(fromSecond.status).toBe(200)
			accepted.push(fromSecond.body.request_id!)
			expect(duringStart).toBeGreaterThan(10)
			expect(statuses.filter((status) => status !== 200)).toEqual([])
			const stored = new Set(
				(await withDatabase(databaseUrl, (prisma) => prisma.deletionRequest.findMany({ select: { id: true } }))).map((r) => r.id),
			)
			for (const id of accepted) expect(stored.has(id)).toBe(true)

			const migrationDirs = fs
				.readdirSync(path.join(projectRoot, 'prisma/migrations'), { withFileTypes: true })
				.filter((entry) => entry.isDirectory())
			const migrations = await withDatabase(databaseUrl, (prisma) =>
				prisma.$queryRawUnsafe<Array<{ migration_name: string; finished_at: Date | null; rolled_back_at: Date | null }>>(
					'SELECT migration_name, finished_at, rolled_back_at FROM _prisma_migrations',
				),
			)
			expect(migrations.map((m) => m.migration_name).sort()).toEqual(migrationDirs.map((d) => d.name).sort())
			for (const migration of migrations) {
				expect(migration.finished_at).not.toBeNull()
				expect(migration.rolled_back_at).toBeNull()
			}
		} finally {
			await Promise.all([first.stop(), second?.stop()])
			await standIns.close()
		}
	}, 150_000)
})
