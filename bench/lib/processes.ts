import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'

// Everything the benchmark starts (servers, PostgreSQL, workers, stand-ins) is registered here and
// torn down in reverse order on every way out: normal end, thrown error, SIGINT/SIGTERM, watchdog.
// A synchronous last resort on 'exit' SIGKILLs any registered process tree still alive.

type Cleanup = { name: string; run: () => Promise<unknown> | unknown }

const cleanups: Cleanup[] = []
const trackedPids = new Set<number>()
const lastResorts = new Set<() => void>()
let cleaning: Promise<void> | undefined

/** Registers a teardown step; returns a function that runs it now (once) and unregisters it. */
export function onCleanup(name: string, run: Cleanup['run']): () => Promise<void> {
	const entry: Cleanup = { name, run }
	cleanups.push(entry)
	let done: Promise<void> | undefined
	return () =>
		(done ??= (async () => {
			const index = cleanups.indexOf(entry)
			if (index >= 0) cleanups.splice(index, 1)
			await runOne(entry)
		})())
}

/** A synchronous kill for the 'exit' handler (e.g. PostgreSQL's kill()). */
export function onLastResort(kill: () => void): () => void {
	lastResorts.add(kill)
	return () => void lastResorts.delete(kill)
}

async function runOne(entry: Cleanup) {
	let timer: NodeJS.Timeout | undefined
	try {
		await Promise.race([
			Promise.resolve().then(entry.run),
			new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timed out after 20 s')), 20_000))),
		])
	} catch (error) {
		console.error(`cleanup: ${entry.name}: ${(error as Error).message}`)
	} finally {
		clearTimeout(timer)
	}
}

export function cleanupAll(): Promise<void> {
	cleaning ??= (async () => {
		while (cleanups.length > 0) await runOne(cleanups.pop()!)
		for (const pid of trackedPids) killTree(pid, 'SIGKILL')
	})()
	return cleaning
}

export function trackPid(pid: number | undefined) {
	if (pid) trackedPids.add(pid)
}

export function untrackPid(pid: number | undefined) {
	if (pid) trackedPids.delete(pid)
}

/** Direct children of `pid`, from /proc (Linux). */
function childPids(pid: number): number[] {
	const result: number[] = []
	try {
		for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
			const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
			if (text) result.push(...text.split(/\s+/).map(Number))
		}
	} catch {
		// gone already
	}
	return result
}

export function isAlive(pid: number) {
	try {
		process.kill(pid, 0)
		return true
	} catch {
		return false
	}
}

/** Signals `pid` and all its descendants (children first collected, then signalled bottom-up). */
export function killTree(pid: number, signal: NodeJS.Signals) {
	const all: number[] = []
	const walk = (p: number) => {
		all.push(p)
		for (const child of childPids(p)) walk(child)
	}
	walk(pid)
	for (const p of all.reverse()) {
		try {
			process.kill(p, signal)
		} catch {
			// already gone
		}
	}
}

/**
 * SIGKILLs every descendant of this process (servers, PostgreSQL under runuser, migration processes,
 * anything started before its handle was known), by pid from /proc. Only at the very end.
 */
export function killDescendants() {
	for (const child of childPids(process.pid)) killTree(child, 'SIGKILL')
}

/** SIGTERM, then SIGKILL to the whole tree after `graceMs`; resolves when `child` has exited. */
export async function stopChild(child: ChildProcess, graceMs = 10_000) {
	if (child.exitCode !== null || child.signalCode !== null) return
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
	child.kill('SIGTERM')
	const timer = setTimeout(() => child.pid && killTree(child.pid, 'SIGKILL'), graceMs)
	await exited
	clearTimeout(timer)
	if (child.pid) killTree(child.pid, 'SIGKILL') // strays (e.g. a migration process) left behind
}

let bailing = false

/** True once a signal, an uncaught error or the watchdog has started tearing everything down. */
export const isBailing = () => bailing

export function installExitHandlers({ watchdogMs }: { watchdogMs: number }) {
	const bail = (reason: string, code: number) => {
		// A second signal while cleaning up: exit now ('exit' below still SIGKILLs every tracked tree).
		if (bailing) process.exit(code)
		bailing = true
		console.error(`\nbench: ${reason}: stopping every server and database…`)
		void cleanupAll().finally(() => process.exit(code))
	}
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => bail(`${signal} received`, 130))
	process.on('uncaughtException', (error) => bail(`uncaught error: ${error.stack ?? error.message}`, 1))
	process.on('unhandledRejection', (error) => bail(`unhandled rejection: ${(error as Error)?.stack ?? String(error)}`, 1))
	const watchdog = setTimeout(() => bail(`watchdog: the run exceeded its ${Math.round(watchdogMs / 1000)} s budget`, 2), watchdogMs)
	watchdog.unref()
	process.on('exit', () => {
		for (const kill of lastResorts) {
			try {
				kill()
			} catch {
				// best effort
			}
		}
		for (const pid of trackedPids) killTree(pid, 'SIGKILL')
		killDescendants()
	})
}

/** A per-request log line: ours (`GET /path 200 1.2ms`) or remix-serve's morgan (`GET /path 200 - - 1.2 ms`). */
const REQUEST_LOG_LINE = /^(?:GET|POST|HEAD|PUT|PATCH|DELETE|OPTIONS) \S+ (?:\d{3}\b|- )/

/**
 * Spawns a process whose output is kept as a bounded tail (for start-up errors) plus the lines that
 * are not per-request log lines (for the report), so a long run does not keep every request's line.
 */
export function spawnTracked(command: string, args: string[], options: { cwd: string; env: Record<string, string | undefined> }) {
	const env = Object.fromEntries(Object.entries(options.env).filter(([, value]) => value !== undefined)) as NodeJS.ProcessEnv
	const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
	trackPid(child.pid)
	child.once('exit', () => untrackPid(child.pid))
	let tail = ''
	const notable: string[] = []
	let notableCount = 0
	const partial = { stdout: '', stderr: '' }
	const listeners = new Set<(chunk: string) => void>()
	const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
		const text = chunk.toString()
		tail = (tail + text).slice(-64 * 1024)
		const lines = (partial[stream] + text).split('\n')
		partial[stream] = lines.pop() ?? ''
		for (const line of lines) {
			const trimmed = line.trim()
			if (!trimmed || REQUEST_LOG_LINE.test(trimmed)) continue
			notableCount++
			notable.push(trimmed)
			if (notable.length > 2000) notable.shift()
		}
		for (const listener of listeners) listener(text)
	}
	child.stdout!.on('data', onData('stdout'))
	child.stderr!.on('data', onData('stderr'))
	return {
		child,
		tail: () => tail,
		/** A position in the notable lines, for notableSince. */
		mark: () => notableCount,
		notableSince(mark: number, limit = 10) {
			const fresh = notable.slice(Math.max(0, notable.length - (notableCount - mark)))
			return [...new Set(fresh)].slice(0, limit)
		},
		/** Resolves when the output matches `pattern`; rejects on exit or timeout. */
		waitFor(pattern: RegExp, timeoutMs: number) {
			return new Promise<RegExpMatchArray>((resolve, reject) => {
				let seen = tail
				const finish = (error?: Error, match?: RegExpMatchArray) => {
					clearTimeout(timer)
					listeners.delete(check)
					child.off('exit', onExit)
					if (error) reject(error)
					else resolve(match!)
				}
				const check = (text: string) => {
					seen += text
					const match = seen.match(pattern)
					if (match) finish(undefined, match)
				}
				const onExit = (code: number | null) => finish(new Error(`exited with ${code} before it was ready:\n${tail}`))
				const timer = setTimeout(() => finish(new Error(`not ready within ${timeoutMs} ms:\n${tail}`)), timeoutMs)
				listeners.add(check)
				child.once('exit', onExit)
				check('')
			})
		},
	}
}
