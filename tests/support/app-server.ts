import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { freePort } from './postgres.ts'
import { projectRoot } from './project.ts'
import { productionStart } from './start-command.ts'

export type RunningApp = {
	url: string
	port: number
	output: () => string
	/** What the app wrote to stderr (console.error and console.warn, node's warnings), in order. */
	errorOutput: () => string
	/** How much of errorOutput() was written while starting: notes on its configuration, not on a request. */
	startupErrorLength: number
	/** Graceful stop (SIGTERM), resolved when the process has exited and its output has all arrived. */
	stop: () => Promise<number | null>
	process: ChildProcess
}

/** The production server's process, started as `npm start` starts it (its node flags and memory settings), with `env`. */
export function spawnProductionServer(env: Record<string, string | undefined>, nodeArgs: string[] = []) {
	const start = productionStart()
	return spawn(process.execPath, [...start.nodeArgs, ...nodeArgs, path.join(projectRoot, start.script)], {
		cwd: projectRoot,
		env: { PATH: process.env.PATH, HOME: process.env.HOME, ...start.env, NODE_ENV: 'production', ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
	})
}

/**
 * Boots the real built server on a free port with the given environment, the way `npm start` runs it
 * (the same node flags and memory settings, read from package.json).
 */
export async function startApp(
	env: Record<string, string | undefined>,
	options: { timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<RunningApp> {
	// The port is chosen up front so APP_URL (return URLs, authorized parties) can name it, and bound
	// seconds later, once the database is open: in between another process's listener or outgoing
	// connection may take it. Such a start is tried again on another port; any other failure is thrown.
	for (let attempt = 1; ; attempt++) {
		try {
			return await startAppOnce(env, options)
		} catch (error) {
			const portTaken = env.PORT === undefined && /cannot listen on port \d+: listen EADDRINUSE/.test(String(error))
			if (!portTaken || attempt === 3) throw error
		}
	}
}

async function startAppOnce(
	env: Record<string, string | undefined>,
	{ timeoutMs = 60_000, nodeArgs = [] as string[] } = {},
): Promise<RunningApp> {
	const chosenPort = env.PORT ?? String(await freePort())
	const child = spawnProductionServer({ APP_URL: `http://127.0.0.1:${chosenPort}`, ...env, PORT: chosenPort }, nodeArgs)
	let output = ''
	let errorOutput = ''
	child.stdout!.on('data', (chunk) => (output += chunk))
	child.stderr!.on('data', (chunk) => {
		output += chunk
		errorOutput += chunk
	})
	// 'close', not 'exit': the last lines (the access log flushed on exit) may still be in the pipes at
	// 'exit', and a test that reads the log after stop() must find them.
	const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))

	let startupErrorLength = 0
	const port = await new Promise<number>((resolve, reject) => {
		const timer = setTimeout(() => {
			child.kill('SIGKILL')
			reject(new Error(`server did not start within ${timeoutMs} ms:\n${output}`))
		}, timeoutMs)
		// Looks only until the server says it is serving, and only at what arrived since the last look:
		// matching the whole output on each chunk re-read (and, output being built by appending,
		// re-copied) every log line so far, which under a benchmark's access log took a growing share of
		// the load generator's CPU from one round to the next.
		let searchedUpTo = 0
		const check = () => {
			const fresh = output.slice(Math.max(0, searchedUpTo - 64))
			searchedUpTo = output.length
			const match = fresh.match(/serving on http:\/\/localhost:(\d+)/)
			if (match) {
				startupErrorLength = errorOutput.length
				clearTimeout(timer)
				child.stdout!.off('data', check)
				resolve(Number(match[1]))
			}
		}
		child.stdout!.on('data', check)
		void exited.then((code) => {
			clearTimeout(timer)
			reject(new Error(`server exited with ${code} before serving:\n${output}`))
		})
	})

	const app: RunningApp = {
		url: `http://127.0.0.1:${port}`,
		port,
		output: () => output,
		errorOutput: () => errorOutput,
		startupErrorLength,
		process: child,
		stop: async () => {
			if (child.exitCode === null) child.kill('SIGTERM')
			const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
			const code = await exited
			clearTimeout(timer)
			return code
		},
	}
	startedApps.push(app)
	return app
}

/** Every app this test file started, in order, stopped or not: their logs are checked after each test. */
export const startedApps: RunningApp[] = []
