import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { Prisma, PrismaClient } from '#app/generated/prisma/client.ts'
import { projectRoot } from '#tests/support/project.ts'
import { reportNameColumnsAsText } from './pg-adapter.server.ts'
import { openEmbeddedDatabase, type EmbeddedDatabase } from './pglite-adapter.server.ts'

const prismaCli = path.join(projectRoot, 'node_modules/prisma/build/index.js')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'callsheet-adapter-'))
const initSql = fs.readFileSync(path.join(projectRoot, 'prisma/migrations/20261122000000_init/migration.sql'), 'utf8')

function prisma(args: string[], env: Record<string, string>) {
	return spawnSync(process.execPath, [prismaCli, ...args], {
		cwd: projectRoot,
		env: { ...process.env, ...env, CHECKPOINT_DISABLE: '1' },
		encoding: 'utf8',
		timeout: 90_000,
	})
}

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

describe('PGlite through our adapter wrapper', () => {
	let database: EmbeddedDatabase
	let client: PrismaClient

	beforeAll(async () => {
		database = await openEmbeddedDatabase(path.join(tmp, 'runtime', 'pglite'))
		await database.pglite.exec(initSql)
		client = new PrismaClient({ adapter: database.factory })
	})
	afterAll(async () => {
		await client.$disconnect()
		await database.close()
	})

	test('a unique violation surfaces as Prisma P2002 naming the field', async () => {
		await client.user.create({ data: { clerkId: 'user_dup' } })
		const error = await client.user.create({ data: { clerkId: 'user_dup' } }).catch((e: unknown) => e)
		expect(error).toBeInstanceOf(Prisma.PrismaClientKnownRequestError)
		expect((error as Prisma.PrismaClientKnownRequestError).code).toBe('P2002')
		expect(JSON.stringify((error as Prisma.PrismaClientKnownRequestError).meta)).toContain('clerkId')
	})

	test('the same inside an interactive transaction, which then rolls back', async () => {
		const error = await client
			.$transaction(async (tx) => {
				await tx.user.create({ data: { clerkId: 'user_tx' } })
				await tx.user.create({ data: { clerkId: 'user_tx' } })
			})
			.catch((e: unknown) => e)
		expect((error as Prisma.PrismaClientKnownRequestError).code).toBe('P2002')
		expect(await client.user.count({ where: { clerkId: 'user_tx' } })).toBe(0)
	})

	test('a missing table is P2021 (what deletion requests read as table_missing)', async () => {
		await database.pglite.exec('CREATE TABLE "Gone" (id int); DROP TABLE "Gone";')
		const error = await client.$queryRawUnsafe('SELECT * FROM "Gone"').catch((e: unknown) => e)
		expect(String((error as Error).message)).toMatch(/does not exist/)
		const missing = await client.webhookEvent
			.create({ data: { id: 'evt_1', type: 'x' } })
			.then(() => database.pglite.exec('DROP TABLE "WebhookEvent"'))
			.then(() => client.webhookEvent.count())
			.catch((e: unknown) => e)
		expect((missing as Prisma.PrismaClientKnownRequestError).code).toBe('P2021')
	})
})

describe('migrations on the embedded database', () => {
	test('a failing migration is reported as failed, and its changes are not kept', async () => {
		const project = path.join(tmp, 'failing')
		fs.mkdirSync(path.join(project, 'migrations', '1_init'), { recursive: true })
		fs.mkdirSync(path.join(project, 'migrations', '2_broken'), { recursive: true })
		fs.copyFileSync(path.join(projectRoot, 'prisma/schema.prisma'), path.join(project, 'schema.prisma'))
		fs.writeFileSync(path.join(project, 'migrations', 'migration_lock.toml'), 'provider = "postgresql"\n')
		fs.writeFileSync(path.join(project, 'migrations', '1_init', 'migration.sql'), initSql)
		fs.writeFileSync(
			path.join(project, 'migrations', '2_broken', 'migration.sql'),
			'CREATE TABLE "Half" (id int);\nSELECT no_such_function();\n',
		)
		const env = { DATABASE_URL: `file:${path.join(project, 'db')}` }
		const deploy = prisma(['migrate', 'deploy', '--schema', path.join(project, 'schema.prisma')], env)
		expect(deploy.status).not.toBe(0)
		expect(deploy.stdout + deploy.stderr).toMatch(/2_broken/)

		const status = prisma(['migrate', 'status', '--schema', path.join(project, 'schema.prisma')], env)
		expect(status.status).not.toBe(0)
		expect(status.stdout + status.stderr).toMatch(/failed/i)

		// The broken migration ran in a transaction: its first statement is gone with it.
		const opened = await openEmbeddedDatabase(path.join(project, 'db'))
		try {
			const { rows } = await opened.pglite.query<{ half: string | null; init: string | null }>(
				`SELECT to_regclass('"Half"')::text AS half, to_regclass('"User"')::text AS init`,
			)
			expect(rows).toEqual([{ half: null, init: '"User"' }])
		} finally {
			await opened.close()
		}
	})

	test('migrate diff replays the migration history on a shadow database (multi-statement scripts)', () => {
		const result = prisma(
			['migrate', 'diff', '--from-migrations', 'prisma/migrations', '--to-schema-datamodel', 'prisma/schema.prisma', '--exit-code'],
			{ DATABASE_URL: `file:${path.join(tmp, 'diff', 'pglite')}` },
		)
		// Exit 0: the migrations produce exactly the schema (2 would mean a difference, 1 an error).
		expect(result.stderr).not.toMatch(/Error/)
		expect(result.status).toBe(0)
	})
})

test('PostgreSQL `name` columns are reported as text for @prisma/adapter-pg', () => {
	const result = reportNameColumnsAsText({ fields: [{ dataTypeID: 19 }, { dataTypeID: 23 }] })
	expect(result.fields.map((field) => field.dataTypeID)).toEqual([25, 23])
})
