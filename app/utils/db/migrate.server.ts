import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { LOCK_TOKEN_ENV } from './data-dir-lock.server.ts'

type Query = (sql: string) => Promise<{ rows: unknown[] }>

export type MigrateOptions = {
	projectRoot: string
	query: Query
	beforeDeploy?: () => Promise<void>
	/** Runs `work` while holding a lock that other instances of the app also take (PostgreSQL). */
	exclusive?: <T>(work: () => Promise<T>) => Promise<T>
	lockToken?: string
	databaseUrl?: string
}

export function migrationNames(projectRoot: string) {
	const folder = path.join(projectRoot, 'prisma', 'migrations')
	return fs
		.readdirSync(folder, { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.map((entry) => entry.name)
		.sort()
}

async function appliedMigrationNames(query: Query): Promise<Set<string>> {
	try {
		const { rows } = await query(`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`)
		return new Set((rows as Array<{ migration_name: string }>).map((row) => row.migration_name))
	} catch (error) {
		if ((error as { code?: string }).code === '42P01') return new Set() // a fresh database
		throw error
	}
}

/**
 * `prisma migrate deploy` is the one migration mechanism (operators run it too, as `npm run db:migrate`).
 * It costs ~10 s even with nothing to do (a timer in the wasm engine), so start-up first checks for
 * pending migrations itself and runs the CLI only when there are some. On PostgreSQL, instances
 * starting together queue on our own advisory lock: the CLI's lock gives up after 10 s, which a
 * second instance waiting on a first one's migration would hit.
 */
export async function applyPendingMigrations(options: MigrateOptions) {
	const pendingNow = async () => {
		const applied = await appliedMigrationNames(options.query)
		return migrationNames(options.projectRoot).filter((name) => !applied.has(name))
	}
	if ((await pendingNow()).length === 0) return { applied: [] as string[] }
	const exclusive = options.exclusive ?? ((work) => work())
	return exclusive(async () => {
		// Another instance may have migrated while we waited for the lock.
		const pending = await pendingNow()
		if (pending.length === 0) return { applied: [] as string[] }
		console.log(`database: applying ${pending.length} migration(s): ${pending.join(', ')}`)
		await options.beforeDeploy?.()
		await runPrismaMigrateDeploy(options)
		// The CLI opens its database by itself: if it ever migrated another one than this server's,
		// serving would meet a schema it does not know. Check where the connection is still open.
		if (!options.beforeDeploy) {
			const left = await pendingNow()
			if (left.length > 0)
				throw new Error(
					`prisma migrate deploy finished, but ${left.length} migration(s) are not applied to this database: ${left.join(', ')}`,
				)
		}
		return { applied: pending }
	})
}

export function runPrismaMigrateDeploy({ projectRoot, lockToken, databaseUrl }: MigrateOptions): Promise<void> {
	const cli = path.join(projectRoot, 'node_modules', 'prisma', 'build', 'index.js')
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [cli, 'migrate', 'deploy'], {
			cwd: projectRoot,
			env: {
				...process.env,
				...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
				...(lockToken ? { [LOCK_TOKEN_ENV]: lockToken } : {}),
				CHECKPOINT_DISABLE: '1',
				PRISMA_HIDE_UPDATE_MESSAGE: '1',
			},
			stdio: ['ignore', 'pipe', 'pipe'],
		})
		let output = ''
		child.stdout.on('data', (chunk) => (output += chunk))
		child.stderr.on('data', (chunk) => (output += chunk))
		child.on('error', reject)
		child.on('exit', (code) => {
			if (code === 0) return resolve()
			reject(new Error(`prisma migrate deploy failed (exit ${code}):\n${output.trim()}`))
		})
	})
}
