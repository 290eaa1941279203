import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { inject } from 'vitest'
import { PrismaClient } from '../../app/generated/prisma/client.ts'
import { databaseTarget } from '../../app/utils/db/database-url.ts'
import { openPostgres } from '../../app/utils/db/pg-adapter.server.ts'
import { openEmbeddedDatabase } from '../../app/utils/db/pglite-adapter.server.ts'
import { startApp, type RunningApp } from './app-server.ts'
import { createDatabase } from './postgres.ts'

/** A fresh, migrated database of the kind this run tests, as a DATABASE_URL. */
export async function freshDatabaseUrl(): Promise<string> {
	const id = `t_${crypto.randomBytes(6).toString('hex')}`
	if (inject('databaseKind') === 'postgres') {
		await createDatabase(inject('postgresAdminUrl'), id, inject('postgresTemplate'))
		return inject('postgresAdminUrl').replace(/\/postgres$/, `/${id}`)
	}
	const dir = path.join(inject('tempRoot'), id, 'pglite')
	fs.cpSync(inject('embeddedTemplateDir'), dir, { recursive: true })
	return `file:${dir}`
}

/**
 * Opens the database directly to check what was stored. The embedded database allows one process at
 * a time, so stop the app first there (which also proves the data survived the stop).
 */
export async function withDatabase<T>(databaseUrl: string, work: (prisma: PrismaClient) => Promise<T>): Promise<T> {
	const target = databaseTarget(databaseUrl)
	const connection = target.kind === 'postgres' ? openPostgres(target.url, { max: 2 }) : await openEmbeddedDatabase(target.dataDir)
	const prisma = new PrismaClient({ adapter: connection.factory })
	try {
		return await work(prisma)
	} finally {
		await prisma.$disconnect()
		await connection.close()
	}
}

/**
 * Reads what a running app stored, and leaves an app serving. PostgreSQL is read beside the app. The
 * embedded database allows one process at a time: there the app is stopped for the read and started
 * again with the same environment (`env`, as given to startApp), on a new port: carry on with the
 * returned app.
 */
export async function readStored<T>(
	app: RunningApp,
	env: Record<string, string | undefined>,
	work: (prisma: PrismaClient) => Promise<T>,
): Promise<{ value: T; app: RunningApp }> {
	const databaseUrl = env.DATABASE_URL
	if (!databaseUrl) throw new Error('readStored: env has no DATABASE_URL')
	if (databaseTarget(databaseUrl).kind === 'postgres') return { value: await withDatabase(databaseUrl, work), app }
	await app.stop()
	// A failed read leaves the app stopped (and nothing running for afterAll to miss).
	const value = await withDatabase(databaseUrl, work)
	return { value, app: await startApp(env) }
}
