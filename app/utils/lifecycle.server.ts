import { connectDatabase, db, disconnectDatabase } from './db.server.ts'
import { initEnv, startupWarnings } from './env.server.ts'

/** Everything the server needs before it accepts a request; throws (and start-up stops) on bad config. */
export async function startServices({ projectRoot, quiet = false }: { projectRoot: string; quiet?: boolean }) {
	const config = initEnv()
	if (!quiet) for (const warning of startupWarnings(config)) console.warn(`warning: ${warning}`)
	const connection = await connectDatabase({ databaseUrl: config.DATABASE_URL, projectRoot })
	// Prisma compiles queries in WebAssembly, loaded on its first query. Loading it here, before the
	// server listens, keeps that work (~35 MB and a short spike, decision 0012) off the first
	// signed-in request and out of the peak under load.
	await db().user.findFirst({ select: { id: true } })
	return { config, databaseKind: connection.kind }
}

export async function stopServices() {
	await disconnectDatabase()
}
