import fs from 'node:fs'
import path from 'node:path'
import crypto from 'node:crypto'

// Two processes writing to one PGlite folder lose writes silently (PGlite has no lock of its own),
// so whoever opens the embedded database first holds this lock file until it exits.

export class DataDirLockedError extends Error {
	constructor(dataDir: string, pid: number) {
		super(
			`The embedded database in ${dataDir} is already in use by process ${pid}. ` +
				`Stop that process first, or set DATABASE_URL to a PostgreSQL server to run several instances.`,
		)
		this.name = 'DataDirLockedError'
	}
}

/** A child process we start ourselves (the migration run) is handed the token and may share the lock. */
export const LOCK_TOKEN_ENV = 'CALLSHEET_DATA_LOCK_TOKEN'

type LockFile = { pid: number; token: string }

function lockPathFor(dataDir: string) {
	return `${path.resolve(dataDir)}.lock`
}

function isAlive(pid: number) {
	try {
		process.kill(pid, 0)
		return true
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM'
	}
}

function readLock(lockPath: string): LockFile | null {
	try {
		return JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockFile
	} catch {
		return null
	}
}

export type DataDirLock = { token: string; release: () => void }

export function acquireDataDirLock(dataDir: string): DataDirLock {
	const lockPath = lockPathFor(dataDir)
	fs.mkdirSync(path.dirname(lockPath), { recursive: true })

	const inherited = process.env[LOCK_TOKEN_ENV]
	const existing = readLock(lockPath)
	if (inherited && existing?.token === inherited) {
		return { token: inherited, release: () => {} }
	}
	// Re-opening in the same process (after closing for a migration run) keeps the lock we hold.
	if (existing?.pid === process.pid) {
		return { token: existing.token, release: () => fs.rmSync(lockPath, { force: true }) }
	}

	const token = crypto.randomUUID()
	for (let attempt = 0; attempt < 2; attempt++) {
		try {
			fs.writeFileSync(lockPath, JSON.stringify({ pid: process.pid, token }), { flag: 'wx' })
			const release = () => {
				if (readLock(lockPath)?.token === token) fs.rmSync(lockPath, { force: true })
			}
			process.once('exit', release)
			return { token, release }
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
			const holder = readLock(lockPath)
			if (holder && isAlive(holder.pid)) throw new DataDirLockedError(dataDir, holder.pid)
			// The holder died without cleaning up (crash, kill -9): the lock is stale.
			fs.rmSync(lockPath, { force: true })
		}
	}
	throw new Error(`Could not lock ${lockPath}`)
}
