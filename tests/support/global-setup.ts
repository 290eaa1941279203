import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { runPrismaMigrateDeploy } from '../../app/utils/db/migrate.server.ts'
import { createDatabase, findPostgresBin, startTestPostgres, type TestPostgres } from './postgres.ts'
import { projectRoot } from './project.ts'

// Migrates one template database per run; each test server then gets a copy of it (a folder copy
// for the embedded database, CREATE DATABASE … TEMPLATE on PostgreSQL), because `migrate deploy`
// costs ~10 s and a copy costs milliseconds.

declare module 'vitest' {
	export interface ProvidedContext {
		databaseKind: 'embedded' | 'postgres'
		embeddedTemplateDir: string
		postgresAdminUrl: string
		postgresTemplate: string
		tempRoot: string
	}
}

export default async function setup(project: TestProject) {
	if (!fs.existsSync(path.join(projectRoot, 'build/server/index.js'))) {
		throw new Error('No build: run `npm run build` first (npm test does).')
	}
	const kind = process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'embedded'
	const tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'callsheet-it-'))
	project.provide('databaseKind', kind)
	project.provide('tempRoot', tempRoot)
	let postgres: TestPostgres | undefined

	try {
		if (kind === 'postgres') {
			if (!findPostgresBin()) throw new Error('TEST_DATABASE=postgres but PostgreSQL is not installed (apt-get install -y postgresql)')
			postgres = await startTestPostgres()
			await createDatabase(postgres.adminUrl, 'callsheet_template')
			await runPrismaMigrateDeploy({ projectRoot, query: async () => ({ rows: [] }), databaseUrl: postgres.url('callsheet_template') })
			project.provide('postgresAdminUrl', postgres.adminUrl)
			project.provide('postgresTemplate', 'callsheet_template')
			project.provide('embeddedTemplateDir', '')
		} else {
			const templateDir = path.join(tempRoot, 'template', 'pglite')
			await runPrismaMigrateDeploy({ projectRoot, query: async () => ({ rows: [] }), databaseUrl: `file:${templateDir}` })
			project.provide('embeddedTemplateDir', templateDir)
			project.provide('postgresAdminUrl', '')
			project.provide('postgresTemplate', '')
		}
	} catch (error) {
		// Vitest runs no teardown for a setup that threw: clean up here, or the cluster and folder stay.
		await postgres?.stop()
		fs.rmSync(tempRoot, { recursive: true, force: true })
		throw error
	}

	return async () => {
		await postgres?.stop()
		fs.rmSync(tempRoot, { recursive: true, force: true })
	}
}
