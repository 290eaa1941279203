import fs from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { DriverAdapterError, isDriverAdapterError, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.server.ts'

// pglite-prisma-adapter 0.6.1 is the last release for Prisma 6 and has defects we fix here, at the
// boundary (each has a test in pglite-adapter.server.test.ts):
//  - executeScript is not awaited: a failing migration was recorded as applied;
//  - multi-statement executeRaw (the shadow-database replay of `migrate diff`) fails in PGlite's
//    extended protocol: it must go through exec();
//  - PostgreSQL error codes arrive as kind "postgres", so a unique violation is not Prisma's P2002.

type PgErrorInfo = { code: string; message: string; detail?: string; column?: string }

function keyFields(detail: string | undefined) {
	const fields = detail?.match(/Key \(([^)]+)\)/)?.[1]?.split(', ')
	return fields?.map((field) => field.replace(/^"|"$/g, ''))
}

/** The same translation @prisma/adapter-pg applies to node-postgres errors. */
export function mapPostgresError(error: PgErrorInfo) {
	switch (error.code) {
		case '23505': {
			const fields = keyFields(error.detail)
			return { kind: 'UniqueConstraintViolation', constraint: fields ? { fields } : undefined } as const
		}
		case '23502':
			return { kind: 'NullConstraintViolation', constraint: error.column ? { fields: [error.column] } : undefined } as const
		case '23503':
			return { kind: 'ForeignKeyConstraintViolation', constraint: error.column ? { fields: [error.column] } : undefined } as const
		case '22001':
			return { kind: 'LengthMismatch', column: error.column } as const
		case '40001':
			return { kind: 'TransactionWriteConflict' } as const
		case '42P01':
			return { kind: 'TableDoesNotExist', table: error.message.split(' ')[1]?.replaceAll('"', '') } as const
		default:
			return null
	}
}

function translate(error: unknown): unknown {
	// The adapter bundles its own (older) copy of driver-adapter-utils: recognise its errors by name.
	if (isDriverAdapterError(error) && error.cause.kind === 'postgres') {
		const mapped = mapPostgresError(error.cause)
		if (mapped) return new DriverAdapterError(mapped)
	}
	if (isPgliteDatabaseError(error)) {
		const mapped = mapPostgresError(error)
		return new DriverAdapterError(
			mapped ?? {
				kind: 'postgres',
				code: error.code,
				severity: 'ERROR',
				message: error.message,
				detail: error.detail,
				column: error.column,
				hint: undefined,
			},
		)
	}
	return error
}

function isPgliteDatabaseError(error: unknown): error is PgErrorInfo {
	return error instanceof Error && typeof (error as { code?: unknown }).code === 'string' && 'severity' in error
}

// A script or a multi-statement query with no parameters cannot go through the extended protocol.
function isScript(query: { sql: string; args: unknown[] }) {
	return query.args.length === 0 && query.sql.trim().replace(/;\s*$/, '').includes(';')
}

type Queryable = {
	queryRaw: (query: { sql: string; args: unknown[] }) => Promise<unknown>
	executeRaw: (query: { sql: string; args: unknown[] }) => Promise<number>
}

function wrapQueryable<T extends object>(target: T, client: Pick<PGlite, 'exec'>): T {
	return new Proxy(target, {
		get(object, property) {
			const value = Reflect.get(object, property, object) as unknown
			if (typeof value !== 'function') return value
			const method = value as (...args: unknown[]) => unknown
			switch (property) {
				case 'queryRaw':
					return (query: Parameters<Queryable['queryRaw']>[0]) =>
						(method.call(object, query) as Promise<unknown>).catch((error) => Promise.reject(translate(error)))
				case 'executeRaw':
					return async (query: Parameters<Queryable['executeRaw']>[0]) => {
						try {
							if (isScript(query)) {
								await client.exec(query.sql)
								return 0
							}
							return await (method.call(object, query) as Promise<number>)
						} catch (error) {
							throw translate(error)
						}
					}
				case 'executeScript':
					return async (script: string) => {
						try {
							await client.exec(script)
						} catch (error) {
							throw translate(error)
						}
					}
				case 'startTransaction':
					return async (...args: unknown[]) => wrapQueryable((await method.apply(object, args)) as object, client)
				default:
					return method.bind(object)
			}
		},
	})
}

export type EmbeddedDatabase = {
	pglite: PGlite
	factory: SqlMigrationAwareDriverAdapterFactory
	lock: DataDirLock
	close: () => Promise<void>
}

/** Opens PGlite once (Prisma's CLI calls adapter() several times per run) behind the folder lock. */
export async function openEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
	fs.mkdirSync(dataDir, { recursive: true }) // PGlite does not create missing parent folders.
	const lock = acquireDataDirLock(dataDir)
	let pglite: PGlite
	try {
		pglite = await PGlite.create({ dataDir })
	} catch (error) {
		lock.release()
		throw error
	}
	return {
		pglite,
		lock,
		factory: wrapFactory(pglite),
		async close() {
			if (!pglite.closed) await pglite.close()
			lock.release()
		},
	}
}

export function wrapFactory(pglite: PGlite): SqlMigrationAwareDriverAdapterFactory {
	// pglite-prisma-adapter is typed against older adapter utils: cast at this boundary.
	const inner = new PrismaPGlite(pglite as never) as unknown as SqlMigrationAwareDriverAdapterFactory
	return {
		provider: inner.provider,
		adapterName: inner.adapterName,
		connect: async () => wrapQueryable(await inner.connect(), pglite),
		connectToShadowDb: async () => {
			const shadow = new PGlite({ dataDir: 'memory://shadow' })
			const adapter = await new PrismaPGlite(shadow as never).connect()
			return wrapQueryable(adapter as unknown as object, shadow) as Awaited<
				ReturnType<SqlMigrationAwareDriverAdapterFactory['connectToShadowDb']>
			>
		},
	}
}
