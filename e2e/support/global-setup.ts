// Playwright global setup: starts the stand-ins (fake Clerk API, fake Stripe, SMTP sink) and the
// production server (`node server/start.js`) on a fresh embedded database, then hands everything a
// worker needs to it through process.env (workers inherit the runner's environment).
// The function it returns is the global teardown.
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FullConfig } from '@playwright/test'
import { startStandIns, type StandIns } from '../../tests/mocks/serve-all.ts'
import { productionStart } from '../../tests/support/start-command.ts'
import { startControlServer, type ControlServer } from './control-server.ts'
import { E2E_ADMIN_USER_ID, E2E_ENV, type E2EClerkKeys } from './env.ts'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const SERVER_READY_TIMEOUT_MS = 90_000
const SERVER_STOP_TIMEOUT_MS = 10_000
export const SERVER_LOG = path.join(projectRoot, 'test-results', 'e2e-server.log')

/** A port nobody is listening on right now (the server is told it explicitly: APP_URL needs it). */
async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const probe = net.createServer()
		probe.unref()
		probe.once('error', reject)
		probe.listen(0, '127.0.0.1', () => {
			const address = probe.address()
			const port = typeof address === 'object' && address ? address.port : 0
			probe.close(() => (port ? resolve(port) : reject(new Error('could not pick a free port'))))
		})
	})
}

function logTail(lines = 40): string {
	try {
		return readFileSync(SERVER_LOG, 'utf8').split('\n').slice(-lines).join('\n')
	} catch {
		return '(no server log)'
	}
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
	if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
	return new Promise((resolve) => {
		const timer = setTimeout(() => resolve(false), ms)
		child.once('exit', () => {
			clearTimeout(timer)
			resolve(true)
		})
	})
}

async function stopServer(child: ChildProcess | undefined): Promise<void> {
	if (!child || child.exitCode !== null || child.signalCode !== null) return
	child.kill('SIGTERM')
	if (!(await waitForExit(child, SERVER_STOP_TIMEOUT_MS))) {
		console.warn(`[e2e] server (pid ${child.pid}) ignored SIGTERM for ${SERVER_STOP_TIMEOUT_MS} ms: sending SIGKILL`)
		child.kill('SIGKILL')
		await waitForExit(child, 5_000)
	}
}

/** Starts the server and resolves once it prints its serving line; rejects (after killing it) otherwise. */
function startServer(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
	mkdirSync(path.dirname(SERVER_LOG), { recursive: true })
	const log = createWriteStream(SERVER_LOG, { flags: 'w' })
	// Run as `npm start` runs it: the same node flags and memory settings.
	const start = productionStart()
	const child = spawn(process.execPath, [...start.nodeArgs, start.script], {
		cwd: projectRoot,
		env: { ...env, ...start.env },
		stdio: ['ignore', 'pipe', 'pipe'],
	})
	child.stdout?.pipe(log, { end: false })
	child.stderr?.pipe(log, { end: false })
	child.once('exit', () => log.end())
	// If the runner dies without running the teardown, do not leave the server behind.
	const killOnExit = () => child.kill('SIGKILL')
	process.once('exit', killOnExit)
	child.once('exit', () => process.removeListener('exit', killOnExit))

	return new Promise((resolve, reject) => {
		let settled = false
		let stdoutSoFar = ''
		const fail = async (reason: string) => {
			if (settled) return
			settled = true
			clearTimeout(timer)
			await stopServer(child)
			reject(new Error(`[e2e] ${reason}\n--- last lines of ${SERVER_LOG} ---\n${logTail()}`))
		}
		const timer = setTimeout(
			() => void fail(`server did not print "Callsheet is serving on" within ${SERVER_READY_TIMEOUT_MS / 1000} s`),
			SERVER_READY_TIMEOUT_MS,
		)
		child.stdout?.on('data', (chunk: Buffer) => {
			if (settled) return
			stdoutSoFar += chunk.toString('utf8')
			if (/Callsheet is serving on http:\/\/\S+/.test(stdoutSoFar)) {
				settled = true
				clearTimeout(timer)
				resolve(child)
			}
		})
		child.once('error', (error) => void fail(`could not spawn the server: ${error.message}`))
		child.once('exit', (code, signal) => void fail(`server exited before serving (code ${code}, signal ${signal})`))
	})
}

export default async function globalSetup(_config: FullConfig): Promise<() => Promise<void>> {
	if (!existsSync(path.join(projectRoot, 'build/server/index.js'))) {
		throw new Error('[e2e] no server build at build/server/index.js: run `npm run build` first (the journeys test the production build).')
	}
	const tempDir = mkdtempSync(path.join(os.tmpdir(), 'callsheet-e2e-'))
	let standIns: StandIns | undefined
	let server: ChildProcess | undefined
	let control: ControlServer | undefined

	const teardown = async () => {
		await stopServer(server)
		await control?.close()
		await standIns?.close()
		rmSync(tempDir, { recursive: true, force: true })
	}

	try {
		const port = await freePort()
		// The browser must use exactly this origin: the app checks it (APP_URL, Clerk authorizedParties).
		const baseURL = `http://127.0.0.1:${port}`
		// With appUrl, the fake Stripe posts hosted-checkout payments' events to ${baseURL}/api/billing/webhook.
		standIns = await startStandIns({ appUrl: baseURL })
		control = await startControlServer(standIns)

		const started = Date.now()
		server = await startServer({
			...process.env,
			...standIns.env,
			NODE_ENV: 'production',
			PORT: String(port),
			APP_URL: baseURL,
			DATABASE_URL: `file:${path.join(tempDir, 'pglite')}`,
			ADMIN_USER_IDS: E2E_ADMIN_USER_ID,
			// Rate limits count in the server's memory, so every run starts from zero (a REDIS_URL
			// inherited from the shell would carry counts over between runs).
			REDIS_URL: '',
		})
		console.log(
			`[e2e] app serving on ${baseURL} after ${((Date.now() - started) / 1000).toFixed(1)} s (log: ${path.relative(projectRoot, SERVER_LOG)})`,
		)

		const { clerk } = standIns
		const keys: E2EClerkKeys = {
			privateKeyPem: clerk.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
			publicKeyPem: clerk.jwtKeyPem,
			kid: clerk.kid,
			issuer: clerk.issuer,
			publishableKey: clerk.publishableKey,
		}
		process.env[E2E_ENV.baseUrl] = baseURL
		process.env[E2E_ENV.clerkKeys] = JSON.stringify(keys)
		process.env[E2E_ENV.standInEnv] = JSON.stringify(standIns.env)
		process.env[E2E_ENV.serverLog] = SERVER_LOG
		process.env[E2E_ENV.controlUrl] = control.url
		process.env[E2E_ENV.controlToken] = control.token
	} catch (error) {
		await teardown()
		throw error
	}
	return teardown
}
