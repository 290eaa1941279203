import { connectDatabase, disconnectDatabase } from './db.server.ts'
import { initEnv, startupWarnings } from './env.server.ts'

/** Everything the server needs before it accepts a request; throws (and start-up stops) on bad config. */
export async function startServices({ projectRoot, quiet = false }: { projectRoot: string; quiet?: boolean }) {
	const config = initEnv()
	if (!quiet) for (const warning of startupWarnings(config)) console.warn(`warning: ${warning}`)
	const connection = await connectDatabase({ databaseUrl: config.DATABASE_URL, projectRoot })
	return { config, databaseKind: connection.kind }
}

export async function stopServices() {
	await disconnectDatabase()
}
