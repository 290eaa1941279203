import { describe, expect, test } from 'vitest'
import { databaseTarget, describeDatabase } from './database-url.ts'

const describeUrl = (url: string) => describeDatabase(databaseTarget(url), '/srv/callsheet')

describe('the database named in the start-up log', () => {
	test('PostgreSQL: host, port and database, never the credentials or the query', () => {
		expect(describeUrl('postgres://app:s3cret@db.internal:6432/callsheet?sslmode=verify-full&password=q')).toBe(
			'PostgreSQL db.internal:6432/callsheet',
		)
		expect(describeUrl('postgresql://db.internal/callsheet')).toBe('PostgreSQL db.internal:5432/callsheet')
	})

	test('a server named in the query (a Unix socket, as libpq and pg take it) is the one named', () => {
		expect(describeUrl('postgres:///callsheet?host=/run/postgresql&port=5433')).toBe('PostgreSQL /run/postgresql:5433/callsheet')
		expect(describeUrl('postgres://app@db.internal/callsheet?host=/tmp')).toBe('PostgreSQL /tmp:5432/callsheet')
	})

	test.each(['postgres://app:2024/s3cret@db/callsheet', 'postgres://app:/Xk9s3cret@db/callsheet', 'postgres://app:a/b@c:d@db/s3cret'])(
		'a password a URL parser splits or cannot read (%s) is not shown at all',
		(url) => {
			const line = describeUrl(url)
			expect(line).toBe('PostgreSQL (DATABASE_URL not shown: it does not read as user:password@host:port/database)')
			expect(line).not.toMatch(/s3cret|Xk9|2024/)
		},
	)

	test('surrounding whitespace is trimmed, as the server trims every variable: the migration CLI reads the same database', () => {
		expect(databaseTarget(' postgres://app@db.internal/callsheet\n')).toEqual({
			kind: 'postgres',
			url: 'postgres://app@db.internal/callsheet',
		})
		expect(databaseTarget('\tfile:/var/lib/callsheet ')).toEqual({ kind: 'embedded', dataDir: '/var/lib/callsheet' })
	})

	test('embedded: the folder, relative when it is inside the project', () => {
		// The scheme in any case, as for postgres://: FILE: names the folder too, not the default.
		expect(databaseTarget('FILE:/var/lib/callsheet')).toEqual({ kind: 'embedded', dataDir: '/var/lib/callsheet' })
		expect(describeUrl('file:./data/pglite')).toBe(
			describeDatabase({ kind: 'embedded', dataDir: `${process.cwd()}/data/pglite` }, '/srv/callsheet'),
		)
		expect(describeDatabase({ kind: 'embedded', dataDir: '/srv/callsheet/data/pglite' }, '/srv/callsheet')).toBe(
			'embedded (PGlite) in ./data/pglite',
		)
		expect(describeDatabase({ kind: 'embedded', dataDir: '/var/lib/callsheet' }, '/srv/callsheet')).toBe(
			'embedded (PGlite) in /var/lib/callsheet',
		)
	})
})
