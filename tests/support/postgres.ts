import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

// A throwaway PostgreSQL cluster from Debian's binaries, on a loopback port and a temp folder,
// removed on stop. As root, the binaries run as the `postgres` user (initdb refuses root).

export type TestPostgres = {
	url: (database: string) => string
	adminUrl: string
	stop: () => Promise<void>
	kill: () => void
	start: () => Promise<void>
}

export function findPostgresBin(): string | null {
	const candidates = [process.env.PG_BIN, '/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin']
	for (const dir of candidates) if (dir && fs.existsSync(path.join(dir, 'initdb'))) return dir
	return null
}

export function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer()
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as net.AddressInfo
			server.close(() => resolve(port))
		})
		server.on('error', reject)
	})
}

const asRoot = process.getuid?.() === 0

function command(bin: string, args: string[]): [string, string[]] {
	return asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]
}

function childrenOf(pid: number): number[] {
	try {
		return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
			.split('\n')
			.filter(Boolean)
			.map(Number)
	} catch {
		return [] // pgrep exits 1 when there are none
	}
}

async function waitForReady(url: string, deadline: number) {
	for (;;) {
		const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
		try {
			await client.connect()
			await client.end()
			return
		} catch (error) {
			await client.end().catch(() => {})
			if (Date.now() > deadline) throw new Error(`PostgreSQL did not start: ${(error as Error).message}`)
			await new Promise((r) => setTimeout(r, 100))
		}
	}
}

/**
 * `durable: false` (the default) trades crash safety for speed; a test that kills the server and then
 * counts what survived needs `durable: true`, or commits acknowledged before the crash are lost.
 */
export async function startTestPostgres({ durable = false } = {}): Promise<TestPostgres> {
	const bin = findPostgresBin()
	if (!bin) throw new Error('PostgreSQL binaries not found (apt-get install -y postgresql)')
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callsheet-pg-'))
	const dataDir = path.join(dir, 'data')
	if (asRoot) execFileSync('chown', ['postgres:postgres', dir])
	const [initCmd, initArgs] = command(path.join(bin, 'initdb'), [
		'-D',
		dataDir,
		'-U',
		'postgres',
		'--auth=trust',
		'-E',
		'UTF8',
		'--no-sync',
	])
	try {
		execFileSync(initCmd, initArgs, { stdio: 'pipe' })
	} catch (error) {
		fs.rmSync(dir, { recursive: true, force: true })
		throw error
	}
	const port = await freePort()
	const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`
	let child: ChildProcess | undefined

	const start = async () => {
		const [cmd, args] = command(path.join(bin, 'postgres'), [
			'-D',
			dataDir,
			'-p',
			String(port),
			'-h',
			'127.0.0.1',
			'-k',
			dir,
			...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
			'-c',
			'max_connections=200',
		])
		const log = fs.openSync(path.join(dir, 'server.log'), 'a')
		child = spawn(cmd, args, { stdio: ['ignore', 'ignore', log], detached: false })
		fs.closeSync(log)
		try {
			await waitForReady(adminUrl, Date.now() + 30_000)
		} catch (error) {
			// Whatever did start must not outlive the failure: nobody holds a handle to stop it.
			killServer()
			const tail = fs.readFileSync(path.join(dir, 'server.log'), 'utf8').split('\n').slice(-8).join('\n')
			throw new Error(`${(error as Error).message}\n${tail}`)
		}
	}

	// The postmaster and every backend die at once, as in a machine crash. Backends must go too: a
	// survivor holds the shared memory and a new postmaster would refuse to start.
	function killServer() {
		const pidFile = path.join(dataDir, 'postmaster.pid')
		// Before the postmaster has written its pid file, it is what we spawned (as root, runuser's child).
		const postmasters = fs.existsSync(pidFile)
			? [Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0])]
			: child?.pid === undefined
				? []
				: asRoot
					? childrenOf(child.pid)
					: [child.pid]
		for (const pid of postmasters.flatMap((postmaster) => [postmaster, ...childrenOf(postmaster)])) {
			try {
				process.kill(pid, 'SIGKILL')
			} catch {}
		}
		child?.kill('SIGKILL')
		// In a container without an init that reaps orphans, the dead postmaster lingers as a zombie
		// whose pid still "exists": drop its pid file, as a rebooted machine would have.
		fs.rmSync(pidFile, { force: true })
		for (const file of fs.readdirSync(dir)) if (file.startsWith('.s.PGSQL.')) fs.rmSync(path.join(dir, file), { force: true })
	}

	try {
		await start()
	} catch (error) {
		fs.rmSync(dir, { recursive: true, force: true })
		throw error
	}

	return {
		adminUrl,
		url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
		start,
		/** Simulates a crash: the server disappears without a clean shutdown. */
		kill: killServer,
		stop: async () => {
			if (child && child.exitCode === null) {
				const exited = new Promise((r) => child!.once('exit', r))
				child.kill('SIGINT')
				await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
			}
			try {
				execFileSync('pkill', ['-9', '-f', `postgres -D ${dataDir}`], { stdio: 'ignore' })
			} catch {}
			fs.rmSync(dir, { recursive: true, force: true })
		},
	}
}

export async function createDatabase(adminUrl: string, name: string, template?: string) {
	const client = new pg.Client({ connectionString: adminUrl })
	await client.connect()
	try {
		await client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`)
	} finally {
		await client.end()
	}
}
