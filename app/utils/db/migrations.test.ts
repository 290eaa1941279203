import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'
import { migrationNames } from './migrate.server.ts'

const projectRoot = path.resolve(import.meta.dirname, '../../..')

// Prisma's migrate deploy through the PostgreSQL driver adapter cuts a migration into statements at
// every semicolon, comments included: a comment holding one fails on PostgreSQL only ("syntax error
// at or near …"), while PGlite runs the script whole and passes. Found when a comment had one.
test('no migration has a semicolon in a comment', () => {
	for (const name of migrationNames(projectRoot)) {
		const sql = fs.readFileSync(path.join(projectRoot, 'prisma/migrations', name, 'migration.sql'), 'utf8')
		const commented = sql.split('\n').filter((line) => /--[^\n]*;/.test(line))
		expect(commented, name).toEqual([])
	}
})
