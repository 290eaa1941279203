import path from 'node:path'

export type DatabaseTarget = { kind: 'postgres'; url: string } | { kind: 'embedded'; dataDir: string }

export const DEFAULT_EMBEDDED_DIR = './data/pglite'

/**
 * contract.md §1: postgres:// or postgresql:// selects PostgreSQL; anything else, or nothing, the
 * embedded database. A `file:` URL names the embedded database's folder (docs/decisions/0003).
 */
export function databaseTarget(value: string | undefined): DatabaseTarget {
	// Trimmed as env.server.ts trims every variable: the migration CLI reads DATABASE_URL raw
	// (prisma.config.ts), and a stray space must not send it to another database than the server's.
	const databaseUrl = value?.trim()
	if (databaseUrl && /^postgres(ql)?:\/\//i.test(databaseUrl)) return { kind: 'postgres', url: databaseUrl }
	if (databaseUrl && /^file:/i.test(databaseUrl)) {
		const folder = decodeURIComponent(databaseUrl.slice('file:'.length).replace(/^\/\/(?=\/)/, ''))
		return { kind: 'embedded', dataDir: path.resolve(folder) }
	}
	return { kind: 'embedded', dataDir: path.resolve(DEFAULT_EMBEDDED_DIR) }
}

/** What start-up says of a DATABASE_URL that is not a URL (env.server.ts), and the migration CLI too. */
export const NOT_A_DATABASE_URL = 'must be a URL (postgres://user:pass@host:5432/db, or file:./data/pglite for the embedded database)'

/**
 * The database `npm run db:migrate` (the Prisma CLI, prisma.config.ts) works on, by start-up's rules:
 * a value that is not a URL stops it, where it was taken as "the embedded database" and migrated
 * ./data/pglite with exit 0; a URL of another scheme is said aloud, as start-up says it.
 */
export function migrationTarget(value: string | undefined, warn: (line: string) => void = console.warn): DatabaseTarget {
	const databaseUrl = value?.trim()
	if (databaseUrl && !URL.canParse(databaseUrl)) throw new Error(`DATABASE_URL: ${NOT_A_DATABASE_URL}`)
	const target = databaseTarget(value)
	if (databaseUrl && target.kind === 'embedded' && !/^file:/i.test(databaseUrl)) {
		warn(
			`warning: DATABASE_URL is not a postgres:// URL (it starts ${databaseUrl.split(':')[0]}:): migrating the database ${describeDatabase(target)} instead.`,
		)
	}
	return target
}

/**
 * Which database serves, for the start-up log: never the URL itself, which may carry a password.
 * Several instances must all say the same PostgreSQL; a mistyped scheme shows as the embedded one.
 */
export function describeDatabase(target: DatabaseTarget, cwd = process.cwd()): string {
	if (target.kind === 'embedded') {
		const relative = path.relative(cwd, target.dataDir)
		return `embedded (PGlite) in ${relative && !relative.startsWith('..') ? `./${relative}` : target.dataDir}`
	}
	const url = URL.canParse(target.url) ? new URL(target.url) : undefined
	// A password with an unescaped `/` or `@` can end up in what a URL parser calls the host or the
	// path (`postgres://app:2024/s3cret@db/x`): then nothing of it is shown.
	const readable = url && /^\/[^/@:]*$/.test(url.pathname) && !url.hostname.includes('@')
	if (!readable) return 'PostgreSQL (DATABASE_URL not shown: it does not read as user:password@host:port/database)'
	// libpq's and pg's query parameters name the server too: `postgres:///app?host=/run/postgresql&port=5433`.
	const host = url.searchParams.get('host') || url.hostname || 'localhost'
	const port = url.searchParams.get('port') || url.port || 5432
	return `PostgreSQL ${host}:${port}${url.pathname}`
}
