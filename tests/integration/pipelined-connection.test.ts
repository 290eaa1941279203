import net from 'node:net'
import pg from 'pg'
import { afterEach, describe, expect, inject, test, vi } from 'vitest'
import { openPipelinedConnection, type PipelinedConnection } from '../../app/utils/db/pipelined-connection.server.ts'
import { expectConsoleError } from '../support/fail-on-console-error.ts'
import { freshDatabaseUrl } from '../support/database.ts'

// The one connection the per-request statements share on PostgreSQL (decision 0026): answers must
// reach the statement that asked, a failing statement must fail alone, and a lost connection must be
// replaced by the next statement, not by a restart.

const onPostgres = inject('databaseKind') === 'postgres'
const opened: PipelinedConnection[] = []

function open(url: string, queryTimeoutMs = 5_000) {
	const connection = openPipelinedConnection(url, { queryTimeoutMs, connectTimeoutMs: 5_000 })
	opened.push(connection)
	return connection
}

afterEach(async () => {
	await Promise.all(opened.splice(0).map((connection) => connection.close()))
})

const echo = (connection: PipelinedConnection, n: number) =>
	connection.query<{ n: number }>({ name: 'echo', text: 'SELECT $1::int AS n', values: [n] }).then((result) => result.rows[0]?.n)
const backendPid = async (connection: PipelinedConnection) =>
	(await connection.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' })).rows[0]?.pid

async function terminate(url: string, pid: number) {
	const admin = new pg.Client({ connectionString: url })
	await admin.connect()
	try {
		await admin.query('SELECT pg_terminate_backend($1)', [pid])
	} finally {
		await admin.end()
	}
}

describe.runIf(onPostgres)('one pipelined connection for the per-request statements', () => {
	test('statements written in the same turn, before the connection is even open, each get their own answer, on one backend', async () => {
		const connection = open(await freshDatabaseUrl())
		const numbers = Array.from({ length: 300 }, (_, i) => i * 7)
		const [answers, pids] = await Promise.all([
			Promise.all(numbers.map((n) => echo(connection, n))),
			Promise.all(Array.from({ length: 20 }, () => backendPid(connection))),
		])
		expect(answers).toEqual(numbers)
		expect(new Set(pids).size).toBe(1)
		// Later turns go on the same connection.
		expect(await backendPid(connection)).toBe(pids[0])
	})

	test('a failing statement fails alone: those written around it are answered', async () => {
		const connection = open(await freshDatabaseUrl())
		const results = await Promise.allSettled([
			echo(connection, 1),
			connection.query({ name: 'missing_table', text: 'SELECT * FROM "NoSuchTable" WHERE id = $1', values: [1] }),
			echo(connection, 3),
			connection.query({ text: 'SELECT 1/0' }),
			echo(connection, 5),
		])
		expect(results.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as { code?: string }).code))).toEqual([
			1,
			'42P01',
			3,
			'22012',
			5,
		])
		expect(await echo(connection, 6)).toBe(6)
	})

	test('statements under one name sent behind a Parse that fails each get their own answer, and the name works once it can', async () => {
		const url = await freshDatabaseUrl()
		const connection = open(url)
		const probe = (n: number) =>
			connection.query<{ n: number }>({ name: 'later_table', text: 'SELECT n FROM "Later" WHERE n = $1', values: [n] })
		const before = await Promise.allSettled([1, 2, 3, 4, 5].map(probe))
		// Not "prepared statement does not exist" (26000) for the four behind the first.
		expect(before.map((result) => (result.status === 'rejected' ? (result.reason as { code?: string }).code : 'answered'))).toEqual(
			Array(5).fill('42P01'),
		)
		const admin = new pg.Client({ connectionString: url })
		await admin.connect()
		await admin.query('CREATE TABLE "Later" (n int); INSERT INTO "Later" SELECT generate_series(1, 5)')
		await admin.end()
		const after = await Promise.all([1, 2, 3, 4, 5, 1, 2].map(probe))
		expect(after.map((result) => result.rows[0]?.n)).toEqual([1, 2, 3, 4, 5, 1, 2])
		expect((await probe(3)).rows).toEqual([{ n: 3 }])
	})

	test('a connection the server ends fails what was in flight on it, and the next statement opens a new one', async () => {
		expectConsoleError()
		const url = await freshDatabaseUrl()
		const connection = open(url)
		const firstPid = await backendPid(connection)
		// Settled as soon as it ends: the server may fail it before terminate() has its own answer.
		const inFlight = connection.query({ text: 'SELECT pg_sleep(30)' }).then(
			() => 'answered',
			(error: Error) => error.message,
		)
		await vi.waitFor(async () => {
			const admin = new pg.Client({ connectionString: url })
			await admin.connect()
			const { rows } = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND query LIKE 'SELECT pg_sleep%'`, [firstPid])
			await admin.end()
			expect(rows).toHaveLength(1)
		})
		await terminate(url, firstPid!)
		expect(await inFlight).toMatch(/terminat/)
		const [answer, nextPid] = await Promise.all([echo(connection, 42), backendPid(connection)])
		expect(answer).toBe(42)
		expect(nextPid).not.toBe(firstPid)
		expect(vi.mocked(console.error).mock.calls.map((args) => String(args[0]))).toEqual([
			expect.stringMatching(/^database: the connection for per-request statements failed: /),
		])
	})

	test('a statement past the query timeout fails (safe to retry), and the connection is replaced', async () => {
		const connection = open(await freshDatabaseUrl(), 300)
		const firstPid = await backendPid(connection)
		await expect(connection.query({ text: 'SELECT pg_sleep(3)' })).rejects.toThrow(/timeout/i)
		expect(await echo(connection, 7)).toBe(7)
		expect(await backendPid(connection)).not.toBe(firstPid)
	})

	test('the session of a statement given up on is cancelled, not left running (or waiting on a lock) on the server', async () => {
		expectConsoleError() // the lost connection's note
		const url = await freshDatabaseUrl()
		const connection = open(url, 300)
		const pid = await backendPid(connection)
		await expect(connection.query({ text: 'SELECT pg_sleep(30)' })).rejects.toThrow(/timeout/i)
		const admin = new pg.Client({ connectionString: url })
		await admin.connect()
		try {
			const deadline = Date.now() + 3_000
			let running: unknown[] = ['not read yet']
			while (running.length > 0 && Date.now() < deadline) {
				running = (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`, [pid])).rows
				if (running.length > 0) await new Promise((resolve) => setTimeout(resolve, 50))
			}
			// Without the cancel the server sleeps on for the whole 30 s (it notices the closed socket only when it writes).
			expect(running).toEqual([])
		} finally {
			await admin.end()
		}
	})

	test('a server that cannot be reached fails each statement, and a later one tries again', async () => {
		const url = await freshDatabaseUrl()
		const unreachable = url.replace(/:(\d+)\//, ':1/')
		const connection = open(unreachable)
		const results = await Promise.allSettled([echo(connection, 1), echo(connection, 2)])
		expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected'])
		await expect(echo(connection, 3)).rejects.toThrow(/ECONNREFUSED/)
	})

	test('closing while the connection is still being opened fails the statements waiting for it', async () => {
		// A server that accepts the connection and never answers the start-up message.
		const held: net.Socket[] = []
		const silent = net.createServer((socket) => void held.push(socket))
		await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
		const { port } = silent.address() as net.AddressInfo
		try {
			const connection = open(`postgresql://nobody@127.0.0.1:${port}/nothing`)
			const waiting = echo(connection, 1).then(
				() => 'answered',
				(error: Error) => error.message,
			)
			await vi.waitFor(() => expect(held).toHaveLength(1))
			await connection.close()
			expect(await waiting).toMatch(/closed/)
		} finally {
			for (const socket of held) socket.destroy()
			await new Promise((resolve) => silent.close(resolve))
		}
	})

	test('after close, statements are refused rather than left waiting', async () => {
		const connection = open(await freshDatabaseUrl())
		expect(await echo(connection, 1)).toBe(1)
		await connection.close()
		await expect(echo(connection, 2)).rejects.toThrow(/closed/)
	})
})
