import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { SERVER_BUILD, sourcesNewerThanBuild, staleBuildWarning } from '../scripts/build-freshness.js'
import { createAppServer } from './app-server.js'
import { createStaticFiles } from './static-files.js'

// `npm start`: the production server. Start-up order: validate configuration, open the database
// (applying pending migrations), then listen. Any failure before listening exits non-zero with the
// reason on one line per problem.

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
process.chdir(projectRoot)
process.env.NODE_ENV ??= 'production'
// Set by hand (a unit file, a container's environment): the production server serves, but React takes
// its development build, and HSTS is not sent. (Another value, such as staging, start-up notes later.)
if (process.env.NODE_ENV === 'development' || process.env.NODE_ENV === 'test') {
	console.warn(
		`warning: NODE_ENV=${process.env.NODE_ENV} under the production server: React renders with its slower development build and HSTS is not sent. Unset it, or set NODE_ENV=production (npm run dev is the development server).`,
	)
}

// Configuration comes from the environment only (a deployment's, a container's); a newcomer who
// copied .env.example to .env would otherwise wonder why nothing in it applies.
if (fs.existsSync('.env') && !process.execArgv.some((arg) => arg.startsWith('--env-file'))) {
	console.warn(
		'warning: .env is not read by npm start (only by npm run dev): set its variables in the environment, e.g. node --env-file=.env',
	)
}

// A promise rejected with nothing to catch it (a library's timer, a cleanup nobody awaits) ends the
// process by Node's default, cutting off every request in flight and every mail being sent. It is a
// defect to fix: logged as one, by the error's kind and where it came from (not its message, which can
// carry a query's values or a request's), and the server keeps serving.
// Set once a stop signal is being handled (below).
let stopping = false
process.on('unhandledRejection', (reason) => {
	const where =
		reason instanceof Error
			? [
					reason.name,
					...(reason.stack ?? '')
						.split('\n')
						.filter((line) => /^\s+at /.test(line))
						.slice(0, 3),
				].join(' | ')
			: typeof reason
	console.error(`process: a rejected promise went unhandled (${stopping ? 'while stopping' : 'kept serving'}): ${where}`)
})

// Started without `npm start` (the command under README "Memory", in a unit file or a container), no
// build was made and none was checked: say so in one line rather than with a module loader's stack,
// and warn of an old build as npm start does.
const newer = sourcesNewerThanBuild(projectRoot)
if (newer === null) {
	console.error(`Start-up failed: there is no build (${SERVER_BUILD}): run npm run build first (npm start builds once by itself)`)
	process.exit(1)
}
if (newer.length > 0) console.warn(staleBuildWarning(newer))

const build = await import(path.join(projectRoot, SERVER_BUILD))
const entry = build.entry.module

// A stop asked for while starting (a deploy rolled back, a supervisor's restart) waits for start-up to
// finish: ended by the signal's default, the process left a migration it had started running on its
// own, and exited 143 instead of 0. A second signal (Ctrl-C again at a start-up that waits on another
// instance's migration) ends it at once, as the default would have.
let stopAskedDuringStartUp = /** @type {string | undefined} */ (undefined)
const noteStopDuringStartUp = (/** @type {string} */ signal) => {
	if (stopAskedDuringStartUp) {
		console.log(`${signal} again: exiting now, without waiting for start-up`)
		process.exit(signal === 'SIGINT' ? 130 : 143)
	}
	stopAskedDuringStartUp = signal
	console.log(`${signal}: stopping once start-up (and any migration it runs) has finished`)
}
process.on('SIGTERM', noteStopDuringStartUp)
process.on('SIGINT', noteStopDuringStartUp)

/**
 * Closes the database (and whatever else start-up opened). On failure (a full disk, PostgreSQL not
 * answering the close within its time) it says so in one line and exits 1: not a clean stop. Only the
 * timeout's own words are printed: a driver's message may quote a URL.
 */
async function stopServicesOrExit() {
	try {
		await entry.stopServices()
	} catch (error) {
		const said = error instanceof Error && error.name === 'DatabaseCloseTimeout' ? `${error.message}; exiting without it` : undefined
		console.error(`stopping: closing the services failed: ${said ?? (error instanceof Error ? error.name : typeof error)}`)
		process.exit(1)
	}
}

let config
try {
	;({ config } = await entry.startServices({ projectRoot }))
} catch (error) {
	console.error(`Start-up failed: ${error instanceof Error ? error.message : String(error)}`)
	process.exit(1)
}
process.off('SIGTERM', noteStopDuringStartUp)
process.off('SIGINT', noteStopDuringStartUp)
if (stopAskedDuringStartUp) {
	await stopServicesOrExit()
	console.log('stopped')
	process.exit(0)
}

const { server, shutdown } = createAppServer({
	getBuild: () => build,
	serveStatic: createStaticFiles(path.join(projectRoot, 'build/client')),
	mode: 'production',
})

server.on('error', async (error) => {
	// A signal meanwhile must not stop it a second time and exit 0: start-up failed.
	stopping = true
	console.error(`Start-up failed: cannot listen on port ${config.PORT}: ${error.message}`)
	await stopServicesOrExit()
	process.exit(1)
})

server.listen(config.PORT, () => {
	const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
	console.log(`Callsheet is serving on http://localhost:${port} (public URL ${config.APP_URL})`)
})

for (const signal of ['SIGTERM', 'SIGINT']) {
	process.on(signal, async () => {
		if (stopping) return
		stopping = true
		console.log(`${signal}: finishing in-flight requests, then stopping`)
		await shutdown()
		await stopServicesOrExit()
		console.log('stopped')
		process.exit(0)
	})
}
