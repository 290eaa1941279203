import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { inject } from 'vitest'
import { PrismaClient } from '../../app/generated/prisma/client.ts'
import { databaseTarget } from '../../app/utils/db/database-url.ts'
import { openPostgres } from '../../app/utils/db/pg-adapter.server.ts'
import { openEmbeddedDatabase } from '../../app/utils/db/pglite-adapter.server.ts'
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
	const connection =
		target.kind === 'postgres' ? openPostgres(target.url, { max: 2 }) : await openEmbeddedDatabase(target.dataDir)
	const prisma = new PrismaClient({ adapter: connection.factory })
	try {
		return await work(prisma)
	} finally {
		await prisma.$disconnect()
		await connection.close()
	}
}
