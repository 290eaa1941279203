import { databaseTarget, describeDatabase } from './db/database-url.ts'
import { connectDatabase, db, disconnectDatabase } from './db.server.ts'
import { initEnv, startupWarnings } from './env.server.ts'
import { countClerkHandshakeFailures } from './handshake-nonce.server.ts'
import { limitsStoreInWords } from './rate-limit.server.ts'

/** Everything the server needs before it accepts a request; throws (and start-up stops) on bad config. */
export async function startServices({ projectRoot, quiet = false }: { projectRoot: string; quiet?: boolean }) {
	const config = initEnv()
	countClerkHandshakeFailures()
	if (!quiet) for (const warning of startupWarnings(config)) console.warn(`warning: ${warning}`)
	const database = describeDatabase(databaseTarget(config.DATABASE_URL))
	const connection = await connectDatabase({ databaseUrl: config.DATABASE_URL, projectRoot }).catch((error: Error) => {
		// "connect ECONNREFUSED 127.0.0.1:5432" alone does not say which service refused.
		throw new Error(`database (${database}): ${error.message}`, { cause: error })
	})
	if (!quiet) console.log(`database: ${database}`)
	if (!quiet) console.log(`rate limits: ${await limitsStoreInWords()}`)
	// Prisma compiles queries in WebAssembly, loaded on its first query. Loading it here, before the
	// server listens, keeps that work (~35 MB and a short spike, decision 0012) off the first
	// signed-in request and out of the peak under load.
	await db().user.findFirst({ select: { id: true } })
	return { config, databaseKind: connection.kind, database }
}

export async function stopServices() {
	await disconnectDatabase()
}
