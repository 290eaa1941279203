import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import { describe, expect, inject, test } from 'vitest'
import { startStandIns } from '../mocks/serve-all.ts'
import { spawnProductionServer, startApp } from '../support/app-server.ts'
import { freshDatabaseUrl, withDatabase } from '../support/database.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { within, until } from '../support/deadline.ts'
import { postJson } from '../support/http.ts'
import { externalIPv4 } from '../support/network.ts'
import { createDatabase, freePort } from '../support/postgres.ts'
import { projectRoot } from '../support/project.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'
import { migrationNames } from '../../app/utils/db/migrate.server.ts'

// Connection-level failures a stopping server may cause: refused (no longer listening), or an idle
// keep-alive connection closed before the request reached it.
const CONNECTION_CLOSED = new Set(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE'])

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
			// Each filing waits 300 ms on the identity provider, so dozens are in flight at SIGTERM.
			standIns.clerkApi.setLatency(300)
			type Outcome = { requestId: string } | { status: number; code?: string } | { connection: string }
			const outcomes = new Map<string, Outcome>()
			const accepted = () => [...outcomes.values()].flatMap((o) => ('requestId' in o ? [o.requestId] : []))
			let firstAccepted: () => void = () => {}
			const loadUnderway = new Promise<void>((resolve) => (firstAccepted = resolve))
			const load = Promise.all(
				users.map(async (id, i) => {
					await new Promise((r) => setTimeout(r, i * 10))
					let response: Response
					try {
						response = await postJson(
							`${app.url}/api/account/delete-request`,
							{ confirmEmail: `${id}@example.com` },
							sessionHeaders(standIns.clerk, id),
						)
					} catch (error) {
						const code = ((error as Error).cause as { code?: string } | undefined)?.code ?? ''
						if (!CONNECTION_CLOSED.has(code)) throw error
						outcomes.set(id, { connection: code })
						return
					}
					const body = (await response.json()) as { request_id?: string; code?: string }
					if (response.status === 200) {
						outcomes.set(id, { requestId: body.request_id! })
						firstAccepted()
					} else outcomes.set(id, { status: response.status, code: body.code })
				}),
			)
			load.catch(() => {}) // awaited below: this only keeps it handled if a wait before that fails
			// SIGTERM once the server is visibly busy: requests are in flight and more keep coming.
			await within(loadUnderway, 30_000, 'a first filing answered 200')
			const atSigterm = { takenIn: standIns.clerkApi.requests.length, answered: outcomes.size, accepted: accepted().length }
			const exitCode = app.stop()
			await within(load, 30_000, 'every request answered or refused')
			expect(await exitCode).toBe(0)
			expect(app.output()).toMatch(/SIGTERM: finishing in-flight requests/)
			expect(outcomes.size).toBe(users.length)

			// A request the server had taken in (it asked the identity provider about that user) was in flight:
			// it must be answered, never cut off. Only requests it never took in may meet a closed connection.
			const takenIn = new Set(standIns.clerkApi.requests.map((r) => decodeURIComponent(r.path.replace('/v1/users/', ''))))
			const cutOff = users.filter((id) => takenIn.has(id) && 'connection' in outcomes.get(id)!)
			expect(cutOff).toEqual([])
			// And that check covered real work: at SIGTERM more filings were taken in than answered, and some
			// of those were answered 200 after it.
			expect(atSigterm.takenIn).toBeGreaterThan(atSigterm.answered)
			expect(accepted().length).toBeGreaterThan(atSigterm.accepted)
			// Anything answered but not accepted says it is safe to retry: a server error with a JSON code.
			for (const outcome of outcomes.values()) {
				if (!('status' in outcome)) continue
				expect(outcome.status).toBeGreaterThanOrEqual(500)
				expect(outcome.code).toEqual(expect.any(String))
			}
			// Every 200 the server logged (its request log is flushed at exit) reached its client.
			const answered200 = app.output().match(/^POST \/api\/account\/delete-request 200 /gm) ?? []
			expect(answered200.length).toBe(accepted().length)
			const stored = new Set(
				(await withDatabase(databaseUrl, (prisma) => prisma.deletionRequest.findMany({ select: { id: true } }))).map((r) => r.id),
			)
			for (const id of accepted()) expect(stored.has(id)).toBe(true)
		} finally {
			await app.stop()
			await standIns.close()
		}
	})
})

describe('graceful shutdown, on a keep-alive connection', () => {
	// The answer went out keep-alive: the client's next request on that connection was taken in and cut
	// at the grace's end, unanswered (a contact message that had been sent, then sent again).
	test('a request in flight at SIGTERM is answered with Connection: close, and the connection ends with it', async () => {
		const standIns = await startStandIns()
		const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env })
		try {
			const id = newClerkUserId()
			standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
			standIns.clerkApi.setLatency(1_500)
			const { hostname, port } = new URL(app.url)
			const socket = net.connect(Number(port), hostname)
			socket.on('error', () => {}) // the close below is what is checked
			let received = ''
			socket.on('data', (chunk) => (received += chunk))
			const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()))
			const body = JSON.stringify({ confirmEmail: `${id}@example.com` })
			const { Cookie } = sessionHeaders(standIns.clerk, id)
			socket.write(
				`POST /api/account/delete-request HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
					`Content-Length: ${Buffer.byteLength(body)}\r\nCookie: ${Cookie}\r\n\r\n${body}`,
			)
			await until(() => standIns.clerkApi.requests.some((r) => r.path === `/v1/users/${id}`), 10_000, 'the filing taken in')
			const exitCode = app.stop()
			await until(() => /\r\n\r\n\{/.test(received), 10_000, 'the answer')
			expect(received).toMatch(/^HTTP\/1\.1 200 /)
			expect(received).toMatch(/\r\nconnection: close\r\n/i)
			expect(received).not.toMatch(/keep-alive/i)
			await within(ended, 5_000, 'the connection closed after the answer')
			expect(await exitCode).toBe(0)
		} finally {
			await app.stop()
			await standIns.close()
		}
	})
})

describe('NODE_ENV set by hand under the production server', () => {
	test('development: start-up warns what it costs, and the server serves', async () => {
		const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), NODE_ENV: 'development' })
		try {
			expect(app.errorOutput().slice(0, app.startupErrorLength)).toMatch(
				/^warning: NODE_ENV=development under the production server: React renders with its slower development build and HSTS is not sent\./m,
			)
			expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
		} finally {
			await app.stop()
		}
	})
})

describe('graceful shutdown, when a request outlasts the grace', () => {
	test('a request still running after 10 s is cut off, and the log says so (its request line reads 499, the client left)', async () => {
		expectServerLog(/^stopping: 1 request\(s\) still running after 10 s were cut off$/)
		const standIns = await startStandIns()
		const app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env })
		try {
			// A first checkout makes three calls to the processor (price, customer, session): 4 s each.
			standIns.stripe.setLatency(4_000)
			const id = newClerkUserId()
			const checkout = postJson(`${app.url}/api/billing/checkout`, { plan: 'solo' }, sessionHeaders(standIns.clerk, id)).catch(
				(error: Error) => error,
			)
			await until(() => standIns.stripe.requests.length > 0, 10_000, 'the checkout taken in')
			expect(await app.stop()).toBe(0)
			expect(await checkout).toBeInstanceOf(Error) // no answer: the connection was closed
			expect(app.errorOutput()).toMatch(/^stopping: 1 request\(s\) still running after 10 s were cut off$/m)
		} finally {
			standIns.stripe.setLatency(0)
			await app.stop()
			await standIns.close()
		}
	}, 40_000)
})

/** `npm <args>` as a person runs it, in a process group of its own so that whatever it leaves behind can be stopped. */
async function runNpm(args: string[], env: { NODE_ENV: 'production' | 'development'; PORT: number }) {
	const npm = spawn('npm', args, {
		cwd: projectRoot,
		env: {
			PATH: process.env.PATH,
			HOME: process.env.HOME,
			NODE_ENV: env.NODE_ENV,
			PORT: String(env.PORT),
			DATABASE_URL: await freshDatabaseUrl(),
		},
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	})
	let output = ''
	npm.stdout!.on('data', (chunk) => (output += chunk))
	npm.stderr!.on('data', (chunk) => (output += chunk))
	const closed = new Promise<number | null>((resolve) => npm.once('close', resolve))
	const killAll = () => {
		try {
			process.kill(-npm.pid!, 'SIGKILL')
		} catch {
			// Already gone, as it should be.
		}
	}
	return { npm, closed, output: () => output, killAll }
}

describe('npm start, as operators run it', () => {
	test('SIGTERM to npm reaches the server, which stops cleanly instead of being left running', async () => {
		const port = await freePort()
		const start = await runNpm(['start'], { NODE_ENV: 'production', PORT: port })
		try {
			await until(() => start.output().includes('is serving on'), 60_000, 'the server to start under npm start')
			expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200)
			start.npm.kill('SIGTERM')
			expect(await within(start.closed, 15_000, 'npm start to exit')).toBe(0)
			expect(start.output()).toMatch(/SIGTERM: finishing in-flight requests, then stopping\n[\s\S]*stopped\n/)
			// Nothing is left answering on the port (a shell between npm and node used to keep it).
			await expect(fetch(`http://127.0.0.1:${port}/api/health`)).rejects.toThrow()
		} finally {
			start.killAll()
		}
	})
})

// Each test waits up to 90 s for the development server (Vite's first start on a clean checkout has no
// cache): the test's own time must outlast that wait, or its finally (which kills the server) never runs.
describe('npm run dev, as developers run it', { timeout: 150_000 }, () => {
	const runDev = (port: number) => runNpm(['run', 'dev'], { NODE_ENV: 'development', PORT: port })

	test('SIGTERM to npm stops the development server (a shell between them kept it serving, holding the database)', async () => {
		const port = await freePort()
		const dev = await runDev(port)
		try {
			await until(() => dev.output().includes('is serving on'), 90_000, 'npm run dev to serve')
			dev.npm.kill('SIGTERM')
			expect(await within(dev.closed, 15_000, 'npm run dev to exit')).toBe(0)
			// Its own stop ran to the end (the database closed), not another listener's exit.
			expect(dev.output()).toMatch(/\nstopped\n$/)
			await expect(fetch(`http://127.0.0.1:${port}/api/health`)).rejects.toThrow()
		} finally {
			dev.killAll()
		}
	})

	// It listened on every address and Vite served any file under the project root but .env and keys:
	// anyone on the network read the outbox's contact messages and the embedded database's files.
	test('it serves this machine only, and no file under ./data', async () => {
		const port = await freePort()
		const probe = path.join(projectRoot, 'data', `dev-probe-${crypto.randomUUID()}.eml`)
		fs.mkdirSync(path.dirname(probe), { recursive: true })
		fs.writeFileSync(probe, 'From: visitor@example.test\r\n\r\nWhat a visitor wrote\r\n')
		const dev = await runDev(port)
		try {
			await until(() => dev.output().includes('is serving on'), 90_000, 'npm run dev to serve')
			const local = `http://127.0.0.1:${port}`
			expect((await fetch(`${local}/api/health`)).status).toBe(200)
			for (const file of [`/data/${path.basename(probe)}`, `/data/${path.basename(probe)}?raw`]) {
				const response = await fetch(`${local}${file}`)
				expect(await response.text(), file).not.toContain('What a visitor wrote')
			}
			// A machine with no address but loopback has no network to serve.
			const external = externalIPv4()
			if (external) {
				await expect(fetch(`http://${external}:${port}/api/health`), external).rejects.toThrow()
				// Vite's live-reload socket, which sends a failing file's source and stack.
				expect(await connects(external, 24_678)).toBe(false)
			}
		} finally {
			dev.killAll()
			fs.rmSync(probe, { force: true })
		}
	})

	test('a port already in use is one line, as npm start says it, not a stack', async () => {
		const taken = net.createServer()
		await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
		const dev = await runDev((taken.address() as net.AddressInfo).port)
		try {
			expect(await within(dev.closed, 90_000, 'npm run dev to give up')).not.toBe(0)
			expect(dev.output()).toMatch(/^Start-up failed: cannot listen on port \d+: listen EADDRINUSE/m)
			expect(dev.output()).not.toMatch(/Unhandled 'error' event|^\s+at /m)
		} finally {
			dev.killAll()
			taken.close()
		}
	})
})

describe('npm run db:migrate, as operators run it', () => {
	// It took a DATABASE_URL that is not a URL for "the embedded database", migrated ./data/pglite and
	// exited 0, where start-up stops: an operator's deploy step reported success on the wrong database.
	test('a DATABASE_URL that is not a URL stops it with the line start-up gives, before any migration', () => {
		const run = spawnSync('npm', ['run', '--silent', 'db:migrate'], {
			cwd: projectRoot,
			env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', DATABASE_URL: 'not a url', CHECKPOINT_DISABLE: '1' },
			encoding: 'utf8',
			timeout: 60_000,
		})
		expect(run.status).not.toBe(0)
		expect(run.stderr + run.stdout).toContain(
			'DATABASE_URL: must be a URL (postgres://user:pass@host:5432/db, or file:./data/pglite for the embedded database)',
		)
		expect(run.stderr + run.stdout).not.toMatch(/migrations? (have been|found)|applied/i)
	})
})

/** Whether a TCP connection to host:port is accepted within 3 s. */
function connects(host: string, port: number) {
	return new Promise<boolean>((resolve) => {
		const socket = net.connect({ host, port, timeout: 3_000 })
		socket.once('connect', () => (socket.destroy(), resolve(true)))
		socket.once('timeout', () => (socket.destroy(), resolve(false)))
		socket.once('error', () => resolve(false))
	})
}

/** Processes other than `serverPid` holding `databaseUrl` in their environment: the migration CLI a server runs. */
function processesWithDatabase(databaseUrl: string, serverPid: number | undefined) {
	return fs.readdirSync('/proc').filter((pid) => {
		if (!/^\d+$/.test(pid) || Number(pid) === serverPid) return false
		try {
			return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`DATABASE_URL=${databaseUrl}`)
		} catch {
			return false
		}
	})
}

/** The production server starting on an empty PostgreSQL database of its own: it will migrate it. */
async function migratingServer(prefix: string) {
	const name = `${prefix}_${Date.now()}`
	await createDatabase(inject('postgresAdminUrl'), name)
	const databaseUrl = inject('postgresAdminUrl').replace(/\/postgres$/, `/${name}`)
	const server = spawnProductionServer({ PORT: String(await freePort()), DATABASE_URL: databaseUrl })
	let output = ''
	server.stdout!.on('data', (chunk) => (output += chunk))
	server.stderr!.on('data', (chunk) => (output += chunk))
	const exited = new Promise<number | null>((resolve) => server.once('close', (code) => resolve(code)))
	return { databaseUrl, server, output: () => output, exited }
}

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
			// Each migration once, finished: not applied by both instances.
			expect(migrations.map((m) => m.migration_name).sort()).toEqual(migrationNames(projectRoot))
			for (const migration of migrations) expect(migration.finished_at).not.toBeNull()
		} finally {
			await Promise.all([first.stop(), second.stop()])
		}
	}, 120_000)

	test("an instance waiting for another's migration says so, and serves once that one is done", async () => {
		const name = `waiting_${Date.now()}`
		await createDatabase(inject('postgresAdminUrl'), name)
		const databaseUrl = inject('postgresAdminUrl').replace(/\/postgres$/, `/${name}`)
		// Another instance migrating: it holds the app's migration lock.
		const other = new pg.Client({ connectionString: databaseUrl })
		await other.connect()
		await other.query('SELECT pg_advisory_lock(20261122)')
		const server = spawnProductionServer({ DATABASE_URL: databaseUrl, PORT: String(await freePort()) })
		let output = ''
		server.stdout!.on('data', (chunk) => (output += chunk))
		server.stderr!.on('data', (chunk) => (output += chunk))
		const closed = new Promise((resolve) => server.once('close', resolve))
		try {
			await until(() => output.includes("database: waiting for another instance's migration to finish"), 30_000, 'the wait said')
			expect(output).not.toMatch(/serving on/)
			await other.query('SELECT pg_advisory_unlock(20261122)')
			await until(() => /serving on http:\/\/localhost:\d+/.test(output), 60_000, 'serving')
			expect(output).toMatch(/database: applying \d+ migration\(s\)/)
		} finally {
			await other.end()
			server.kill('SIGTERM')
			await closed
		}
	}, 120_000)

	test('DATABASE_URL with a stray space and newline migrates the PostgreSQL database the server serves', async () => {
		const name = `padded_${Date.now()}`
		await createDatabase(inject('postgresAdminUrl'), name)
		const databaseUrl = inject('postgresAdminUrl').replace(/\/postgres$/, `/${name}`)
		// The migration CLI reads DATABASE_URL itself: untrimmed, it took the embedded database instead.
		const app = await startApp({ DATABASE_URL: ` ${databaseUrl}\n` }, { timeoutMs: 90_000 })
		try {
			expect((await fetch(`${app.url}/api/billing/status`)).status).toBe(401)
			const applied = await withDatabase(databaseUrl, (prisma) =>
				prisma.$queryRawUnsafe<Array<{ migration_name: string }>>(
					'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL',
				),
			)
			expect(applied.map((m) => m.migration_name).sort()).toEqual(migrationNames(projectRoot))
		} finally {
			await app.stop()
		}
	}, 120_000)

	test('SIGTERM while start-up migrates: the migration finishes, nothing is left running, the server exits 0 without serving', async () => {
		const { databaseUrl, server, output, exited } = await migratingServer('stopped')
		const helpersOfThisDatabase = () => processesWithDatabase(databaseUrl, server.pid)
		try {
			await until(() => helpersOfThisDatabase().length > 0, 30_000, 'the migration CLI starting')
			server.kill('SIGTERM')
			expect(await within(exited, 60_000, 'the server stopping')).toBe(0)
			expect(output()).toMatch(/SIGTERM: stopping once start-up \(and any migration it runs\) has finished/)
			expect(output()).toMatch(/^stopped$/m)
			expect(output()).not.toMatch(/serving on/)
			expect(helpersOfThisDatabase()).toEqual([])
			const applied = await withDatabase(databaseUrl, (prisma) =>
				prisma.$queryRawUnsafe<Array<{ migration_name: string }>>(
					'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL',
				),
			)
			expect(applied.map((m) => m.migration_name).sort()).toEqual(migrationNames(projectRoot))
		} finally {
			if (server.exitCode === null) server.kill('SIGKILL')
		}
	}, 120_000)

	test('a second SIGTERM while start-up migrates ends the server at once', async () => {
		const { databaseUrl, server, output, exited } = await migratingServer('stopped_twice')
		try {
			await until(() => processesWithDatabase(databaseUrl, server.pid).length > 0, 30_000, 'the migration CLI starting')
			server.kill('SIGTERM')
			await until(() => /SIGTERM: stopping once start-up/.test(output()), 10_000, 'the first signal noted')
			server.kill('SIGTERM')
			expect(await within(exited, 10_000, 'the server exiting on the second signal')).toBe(143)
			expect(output()).toMatch(/SIGTERM again: exiting now, without waiting for start-up/)
		} finally {
			if (server.exitCode === null) server.kill('SIGKILL')
		}
	}, 60_000)

	test('a second instance starting while the first serves load: no request fails, nothing migrates twice, both serve', async () => {
		const standIns = await startStandIns()
		const name = `rolling_${Date.now()}`
		await createDatabase(inject('postgresAdminUrl'), name)
		const databaseUrl = inject('postgresAdminUrl').replace(/\/postgres$/, `/${name}`)
		const first = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env }, { timeoutMs: 90_000 })
		let second: Awaited<ReturnType<typeof startApp>> | undefined
		let loading = true
		let load: Promise<unknown> = Promise.resolve()
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
			const worker = async () => {
				while (loading) {
					const { status, body } = await fileRequest(first.url)
					statuses.push(status)
					if (status === 200) accepted.push(body.request_id!)
				}
			}
			load = Promise.all([worker(), worker(), worker()])
			await until(() => accepted.length >= 10, 30_000, 'ten filings accepted by the first instance')

			// Starts (and looks for pending migrations) while the first keeps answering.
			const beforeStart = statuses.length
			second = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env }, { timeoutMs: 90_000 })
			const duringStart = statuses.length - beforeStart
			const fromSecond = await fileRequest(second.url)
			loading = false
			await load

			expect(fromSecond.status).toBe(200)
			accepted.push(fromSecond.body.request_id!)
			// The first instance answered while the second was starting, not only before.
			expect(duringStart).toBeGreaterThan(0)
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
			// A failed wait above must not leave the workers filing against stopped servers.
			loading = false
			await load.catch(() => {})
			await Promise.all([first.stop(), second?.stop()])
			await standIns.close()
		}
	}, 150_000)
})
