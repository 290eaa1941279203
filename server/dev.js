import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createAppServer } from './app-server.js'

// `npm run dev`: the same server as production, with Vite's middleware for HMR and on-demand builds.
// In development (only) configuration is also read from .env; real environment variables win.

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
process.chdir(projectRoot)
process.env.NODE_ENV ??= 'development'
if (fs.existsSync('.env')) process.loadEnvFile('.env')

const { createServer } = await import('vite')
const vite = await createServer({
	server: {
		middlewareMode: true,
		// Its live-reload socket (port 24678) too: it sends the source of a file that fails to compile.
		hmr: { host: '127.0.0.1' },
		// Vite serves any file under the project root that its deny list does not name. Its defaults are
		// kept, and ./data is added: the embedded database and the outbox's contact messages are there.
		// (Patterns with a slash match the absolute path.)
		fs: { deny: ['.env', '.env.*', '*.{crt,pem}', '**/.git/**', `${projectRoot}/data/**`, '.npmrc'] },
	},
	appType: 'custom',
})
const getBuild = () => vite.ssrLoadModule('virtual:remix/server-build')

const build = await getBuild()
let config
try {
	;({ config } = await build.entry.module.startServices({ projectRoot }))
} catch (error) {
	console.error(`Start-up failed: ${error instanceof Error ? error.message : String(error)}`)
	process.exit(1)
}

const { server, shutdown } = createAppServer({
	getBuild,
	mode: 'development',
	// Vite answers its own requests (modules, HMR); everything else falls through to Remix.
	viteMiddleware: (req, res) =>
		new Promise((resolve) => {
			vite.middlewares(req, res, () => resolve(false))
			res.once('finish', () => resolve(true))
		}),
})

// As npm start says it (a port in use): one line, not an unhandled 'error' event's stack.
server.on('error', async (error) => {
	console.error(`Start-up failed: cannot listen on port ${config.PORT}: ${error.message}`)
	await vite.close()
	await build.entry.module.stopServices()
	process.exit(1)
})

// This machine only, as Vite's own dev server: development serves the project's source and sends its
// errors' stacks to the browser, which no one else on the network should read. (npm start listens on
// every address, as a deployment must.)
server.listen(config.PORT, '127.0.0.1', () => {
	const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
	// localhost: APP_URL's default, the origin sign-in accepts sessions from.
	console.log(`Callsheet (development) is serving on http://localhost:${port} (this machine only)`)
})
// Remix's Vite plugin runs a child compiler, a Vite dev server of its own outside middleware mode, whose
// SIGTERM listener closes only that compiler and exits 143: it raced the stop below (measured: on
// PostgreSQL it won every time, so the database was never closed). The stop below closes Vite too.
// (A stop asked for while starting still meets that listener: start.js's wait for start-up is not
// repeated here, in development.)
process.removeAllListeners('SIGTERM')
let stopping = false
for (const signal of ['SIGTERM', 'SIGINT']) {
	process.on(signal, async () => {
		if (stopping) return
		stopping = true
		try {
			await shutdown(2_000)
			// The build whose services are open, read while Vite still can: once closed, it never answers.
			const latest = await getBuild().catch(() => build)
			await vite.close()
			await latest.entry.module.stopServices()
		} catch (error) {
			console.error(`stopping: ${error instanceof Error ? error.message : String(error)}`)
			process.exit(1)
		}
		console.log('stopped')
		process.exit(0)
	})
}
