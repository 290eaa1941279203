import path from 'node:path'
import { defineConfig } from 'prisma/config'
import { migrationTarget } from './app/utils/db/database-url.ts'
import { openEmbeddedDatabase } from './app/utils/db/pglite-adapter.server.ts'
import { openPostgres } from './app/utils/db/pg-adapter.server.ts'

// Prisma 6.19 with a driver adapter runs its WebAssembly schema engine: no engine download, which
// this network forbids. See ../shared/notes/prisma-offline.md and docs/decisions/0002.
let factory: Promise<Awaited<ReturnType<typeof openEmbeddedDatabase>>['factory'] | ReturnType<typeof openPostgres>['factory']> | undefined

export default defineConfig({
	experimental: { adapter: true },
	engine: 'js',
	schema: path.join('prisma', 'schema.prisma'),
	// The CLI calls adapter() more than once per run: open the database once.
	adapter: async () => {
		factory ??= (async () => {
			const target = migrationTarget(process.env.DATABASE_URL)
			if (target.kind === 'postgres') return openPostgres(target.url, { max: 2, exitWhenIdle: true }).factory
			return (await openEmbeddedDatabase(target.dataDir)).factory
		})()
		return factory
	},
})
