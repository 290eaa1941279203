// `npm run bench`: throughput, latency and memory of the production server on PostgreSQL and on the
// embedded database, against two anchors measured in the same run: a bare node:http server (this
// machine's limit) and the same build under stock remix-serve. See docs/performance.md.
//
// Settings (environment): BENCH_SECONDS (10), BENCH_WARMUP (2), BENCH_CONNECTIONS (20),
// BENCH_ONLY=postgres|embedded, BENCH_BUILD=auto|0|1 (auto: build when missing or older than app/).
// For iterating on one change (the run is then marked partial): BENCH_ENDPOINTS=status,contact,…,
// BENCH_ANCHORS=0 (skip both anchors), BENCH_ROUNDS=1, BENCH_NODE_ARGS (e.g. --cpu-prof for ours).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runPrismaMigrateDeploy } from '../app/utils/db/migrate.server.ts'
import { sessionCookie } from '../tests/mocks/clerk.ts'
import { startStandIns, type StandIns } from '../tests/mocks/serve-all.ts'
import { productionStart } from '../tests/support/start-command.ts'
import { sourcesNewerThanBuild } from '../scripts/build-freshness.js'
import { createDatabase, findPostgresBin, freePort, startTestPostgres, type TestPostgres } from '../tests/support/postgres.ts'
import { BROWSER_UA, measureClientWeight, type PageWeight } from './lib/client-weight.ts'
import { mergeLoads, runLoad, type LoadRequest, type LoadResult } from './lib/load.ts'
import { cleanupAll, installExitHandlers, isBailing, onCleanup, spawnTracked, stopChild } from './lib/processes.ts'
import {
	endpointName,
	evaluateTargets,
	memoryTable,
	problems,
	table,
	targetsTable,
	weightTable,
	type EndpointId,
	type EndpointResult,
	type SetResult,
} from './lib/report.ts'
import { RssSampler } from './lib/rss.ts'
import { startCpuMeter, type CpuUsage } from './lib/cpu.ts'
import { startLeanSmtp, type LeanSmtp } from './lib/lean-smtp.ts'
import { startLeanStripe, type LeanStripe } from './lib/lean-stripe.ts'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

// ---------------------------------------------------------------------------------------------------
// Settings

function numberSetting(name: string, fallback: number, min: number) {
	const raw = process.env[name]?.trim()
	if (!raw) return fallback
	const value = Number(raw)
	if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number ≥ ${min} (got "${raw}")`)
	return value
}

function endpointFilter() {
	const raw = process.env.BENCH_ENDPOINTS?.trim()
	if (!raw) return undefined
	const known = ENDPOINTS.map((spec) => spec.id as string)
	const wanted = raw.split(',').map((id) => id.trim())
	const unknown = wanted.filter((id) => !known.includes(id))
	if (unknown.length > 0) throw new Error(`BENCH_ENDPOINTS: unknown ${unknown.join(', ')} (known: ${known.join(', ')})`)
	return wanted
}

function readConfig() {
	const only = process.env.BENCH_ONLY?.trim() || undefined
	if (only && only !== 'postgres' && only !== 'embedded') throw new Error(`BENCH_ONLY must be postgres or embedded (got "${only}")`)
	const build = process.env.BENCH_BUILD?.trim() || 'auto'
	if (!['auto', '0', '1'].includes(build)) throw new Error(`BENCH_BUILD must be auto, 0 or 1 (got "${build}")`)
	return {
		seconds: numberSetting('BENCH_SECONDS', 10, 1),
		warmup: numberSetting('BENCH_WARMUP', 2, 0),
		connections: numberSetting('BENCH_CONNECTIONS', 20, 1),
		only: only as 'postgres' | 'embedded' | undefined,
		build: build as 'auto' | '0' | '1',
		endpoints: endpointFilter(),
		anchors: process.env.BENCH_ANCHORS?.trim() !== '0',
		rounds: numberSetting('BENCH_ROUNDS', 2, 1),
		nodeArgs: process.env.BENCH_NODE_ARGS?.trim().split(/\s+/).filter(Boolean) ?? [],
	}
}

type Config = ReturnType<typeof readConfig>

// ---------------------------------------------------------------------------------------------------
// Endpoints

const BENCH_EMAIL = 'bench.user@example.test'
const JSON_HEADERS = { Accept: 'application/json', 'Content-Type': 'application/json' }

type EndpointSpec = {
	id: EndpointId
	method: 'GET' | 'POST'
	path: string
	/** Shown after the path when two endpoints share it. */
	variant?: string
	headers: Record<string, string>
	body?: string
	signedIn?: true
}

const ENDPOINTS: EndpointSpec[] = [
	{ id: 'health', method: 'GET', path: '/api/health', headers: { Accept: 'application/json' } },
	// A first visit: no cookie, so the server may answer from its signed-out page cache (decision 0016).
	{ id: 'pricing', method: 'GET', path: '/pricing', headers: { Accept: 'text/html', 'User-Agent': BROWSER_UA } },
	// A signed-out visitor who carries some cookie: every request is rendered, the cost the cache saves.
	{
		id: 'pricing-rendered',
		method: 'GET',
		path: '/pricing',
		variant: 'rendered: a cookie, no session',
		headers: { Accept: 'text/html', 'User-Agent': BROWSER_UA, Cookie: 'theme=dark' },
	},
	// Signed-in endpoints rotate through one pool of users, each making the same request again and again
	// (their rows, customers and pending requests exist after the warm-up): the steady state, not sign-up.
	{ id: 'billing-status', method: 'GET', path: '/api/billing/status', headers: { Accept: 'application/json' }, signedIn: true },
	{
		id: 'contact',
		method: 'POST',
		path: '/api/contact',
		headers: JSON_HEADERS,
		body: JSON.stringify({
			name: 'Bench Mark',
			email: 'visitor@example.test',
			subject: 'Benchmark',
			message: 'A message from npm run bench.',
		}),
	},
	// Checkout and deletion are limited to 10 per user per minute: the servers run with
	// BENCH_RAISE_LIMITS=1 (loopback only), which raises every limit but still counts in the same store.
	{
		id: 'checkout',
		method: 'POST',
		path: '/api/billing/checkout',
		headers: JSON_HEADERS,
		body: JSON.stringify({ plan: 'solo', interval: 'month' }),
		signedIn: true,
	},
	{
		id: 'delete-request',
		method: 'POST',
		path: '/api/account/delete-request',
		headers: JSON_HEADERS,
		body: JSON.stringify({ confirmEmail: BENCH_EMAIL, reason: 'benchmark' }),
		signedIn: true,
	},
]

const USERS = 200

// ---------------------------------------------------------------------------------------------------
// Servers

type Target = {
	label: string
	url: string
	pid: number
	/** A position in the server's log, and the notable (non-request) lines logged since. */
	logMark: () => number
	logSince: (mark: number) => string[]
	stop: () => Promise<void>
	startupMs: number
}

function baseEnv(): Record<string, string> {
	return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir() }
}

async function startBare(): Promise<Target> {
	const started = Date.now()
	const port = await freePort()
	// The health payload's shape and headers, with nothing else: the machine's limit for this response.
	const script = `
const http = require('node:http')
const body = JSON.stringify({ ok: true, version: 'bench', region: 'unknown', timestamp: new Date().toISOString() })
http.createServer((req, res) => {
	res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'public, max-age=10, s-maxage=10', 'Content-Length': Buffer.byteLength(body) })
	res.end(body)
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('bare node:http listening'))`
	const proc = spawnTracked(process.execPath, ['-e', script], { cwd: projectRoot, env: { ...baseEnv(), PORT: String(port) } })
	const stop = onCleanup('bare node:http', () => stopChild(proc.child, 3000))
	await proc.waitFor(/listening/, 15_000)
	return {
		label: 'node:http (bare)',
		url: `http://127.0.0.1:${port}`,
		pid: proc.child.pid!,
		logMark: proc.mark,
		logSince: proc.notableSince,
		stop,
		startupMs: Date.now() - started,
	}
}

async function startOurs(label: string, databaseUrl: string, standIns: StandIns, nodeArgs: string[] = []): Promise<Target> {
	const started = Date.now()
	const port = await freePort()
	// The command of `npm start` (its node flags and environment, read from package.json), with its
	// output kept as remix-serve's is (a bounded tail and the lines that are not per-request lines):
	// startApp (tests) kept every access-log line in one growing string and matched it whole on each
	// chunk, which took a growing share of this process's CPU from the server under test (status over
	// three identical rounds: 9 275 / 8 986 / 8 353 req/s; 9 275 / 9 160 / 9 190 with this).
	const start = productionStart()
	const proc = spawnTracked(process.execPath, [...start.nodeArgs, ...nodeArgs, path.join(projectRoot, start.script)], {
		cwd: projectRoot,
		env: {
			...baseEnv(),
			...start.env,
			NODE_ENV: 'production',
			PORT: String(port),
			APP_URL: `http://127.0.0.1:${port}`,
			DATABASE_URL: databaseUrl,
			...standIns.env,
			BENCH_RAISE_LIMITS: '1',
			// server/start.js listens on every interface today (it takes no host setting); HOST is passed
			// so that it stays on loopback as soon as it honours one.
			HOST: '127.0.0.1',
		},
	})
	const stop = onCleanup(label, () => stopChild(proc.child, 15_000))
	await proc.waitFor(/serving on http:\/\/localhost:\d+/, 240_000)
	return {
		label,
		url: `http://127.0.0.1:${port}`,
		pid: proc.child.pid!,
		logMark: proc.mark,
		logSince: proc.notableSince,
		stop,
		startupMs: Date.now() - started,
	}
}

async function startRemixServe(label: string, databaseUrl: string, standIns: StandIns): Promise<Target> {
	const started = Date.now()
	const port = await freePort()
	const cli = path.join(projectRoot, 'node_modules/@remix-run/serve/dist/cli.js')
	const proc = spawnTracked(process.execPath, [cli, 'build/server/index.js'], {
		cwd: projectRoot,
		env: {
			...baseEnv(),
			NODE_ENV: 'production',
			PORT: String(port),
			HOST: '127.0.0.1', // remix-serve binds every interface unless told otherwise
			APP_URL: `http://127.0.0.1:${port}`,
			// The build connects (and migrates) the database itself at import when this is set.
			CALLSHEET_AUTOSTART: '1',
			DATABASE_URL: databaseUrl,
			...standIns.env,
			BENCH_RAISE_LIMITS: '1',
		},
	})
	// remix-serve closes its listener on SIGTERM but an open database pool keeps it alive: short grace.
	const stop = onCleanup(label, () => stopChild(proc.child, 3000))
	await proc.waitFor(/\[remix-serve\] http:\/\/localhost:\d+/, 240_000)
	return {
		label,
		url: `http://127.0.0.1:${port}`,
		pid: proc.child.pid!,
		logMark: proc.mark,
		logSince: proc.notableSince,
		stop,
		startupMs: Date.now() - started,
	}
}

// ---------------------------------------------------------------------------------------------------
// Users

let userSerial = 0

/** Signed-in users the fake Clerk knows (same email for all), as Cookie headers valid for 6 hours. */
function mintUsers(standIns: StandIns, count: number, tag: string): string[] {
	const cookies: string[] = []
	const exp = Math.floor(Date.now() / 1000) + 6 * 3600
	for (let i = 0; i < count; i++) {
		const id = `user_bench_${tag}_${(userSerial++).toString(36)}`
		standIns.clerkApi.setUser({ id, email: BENCH_EMAIL })
		cookies.push(sessionCookie(standIns.clerk.sign({ sub: id, exp })))
	}
	return cookies
}

// ---------------------------------------------------------------------------------------------------
// One set: every endpoint against one server

function clearStandInRecords(standIns: StandIns) {
	standIns.clerkApi.requests.length = 0
	standIns.stripe.requests.length = 0
	standIns.stripe.deliveries.length = 0
	standIns.smtp.messages.length = 0
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function summarize(
	spec: EndpointSpec,
	load: LoadResult,
	{
		peakRssMb,
		cpu,
		serverLog,
		usersInRotation,
	}: { peakRssMb: number; cpu: CpuUsage; serverLog: string[]; usersInRotation?: number | undefined },
): EndpointResult {
	const statusCounts = Object.fromEntries(Object.entries(load.statusCodeStats).map(([status, { count }]) => [status, count]))
	const responses = Object.values(statusCounts).reduce((sum, count) => sum + count, 0)
	const ok = okResponses(load)
	const rateLimited = statusCounts['429'] ?? 0
	const duration = load.duration || 1
	return {
		endpoint: spec.id,
		method: spec.method,
		path: spec.path,
		...(spec.variant ? { variant: spec.variant } : {}),
		rps: responses / duration,
		okRps: ok / duration,
		p50Ms: load.latency.p50,
		p99Ms: load.latency.p99,
		errors: responses - ok - rateLimited + load.errors,
		rateLimited,
		socketErrors: load.errors,
		statusCounts,
		errorSamples: load.samples,
		serverLog,
		peakRssMb,
		cpu,
		...(usersInRotation ? { usersInRotation } : {}),
		load,
	}
}

type SetMeta = Pick<SetResult, 'id' | 'server' | 'database' | 'round' | 'anchor'> & { label: string }

/**
 * A server measured in a set, with its memory sampler; `only`: the endpoints it is measured on (the
 * bare node:http anchor answers health alone).
 */
type Measured = { target: Target; meta: SetMeta; sampler: RssSampler; only?: EndpointId[] }

type Shared = { standIns: StandIns; mail: LeanSmtp; processor: LeanStripe; config: Config }

/** One measured stretch of load on one server: what a set's result for an endpoint is made of. */
type Slice = { load: LoadResult; cpu: CpuUsage; peakRssMb: number; serverLog: string[]; mails: number; sessions: number }

async function measureSlice(server: Measured, request: LoadRequest, seconds: number, { mail, processor, config }: Shared): Promise<Slice> {
	const logMark = server.target.logMark()
	const peak = server.sampler.phase()
	const mailsBefore = mail.accepted()
	const sessionsBefore = processor.sessionsCreated()
	// From the first request on: the load generator's own start-up (a few hundred ms) is idle time for the server.
	let cpu: (() => CpuUsage) | undefined
	const onStarted = () => (cpu = startCpuMeter(server.target.pid, os.cpus().length))
	const load = await runLoad(server.target.url, request, { seconds, connections: config.connections, onStarted })
	if (!cpu) throw new Error('the load generator never said it started')
	return {
		load,
		cpu: cpu(),
		peakRssMb: peak(),
		serverLog: server.target.logSince(logMark),
		mails: mail.accepted() - mailsBefore,
		sessions: processor.sessionsCreated() - sessionsBefore,
	}
}

/** Slices of one server merged: CPU shares weighted by each slice's length, the rest added up or the highest. */
function mergeSlices(slices: Slice[]): Slice {
	const seconds = slices.map((slice) => slice.load.duration || 1)
	const total = seconds.reduce((sum, value) => sum + value, 0)
	const weighted = (pick: (cpu: CpuUsage) => number | null) => {
		const values = slices.map((slice) => pick(slice.cpu))
		if (values.some((value) => value === null)) return null
		return values.reduce<number>((sum, value, index) => sum + value! * seconds[index]!, 0) / total
	}
	return {
		load: mergeLoads(slices.map((slice) => slice.load)),
		cpu: {
			serverPct: weighted((cpu) => cpu.serverPct),
			benchPct: weighted((cpu) => cpu.benchPct)!,
			machinePct: weighted((cpu) => cpu.machinePct)!,
		},
		peakRssMb: Math.max(...slices.map((slice) => slice.peakRssMb)),
		serverLog: slices.flatMap((slice) => slice.serverLog),
		mails: slices.reduce((sum, slice) => sum + slice.mails, 0),
		sessions: slices.reduce((sum, slice) => sum + slice.sessions, 0),
	}
}

/**
 * Every endpoint against one server, or against ours (last) with anchors beside it (decision 0027).
 * Paired, each endpoint is warmed on every server measuring it, then measured in half-length slices,
 * the anchors, ours twice, the anchors in reverse (remix-serve, ours, ours, remix-serve), so that the
 * machine's drift over the minutes of a run (±10–25 % here from one run to the next) falls on both
 * sides of each ratio alike. Each server gets the same total measured time as alone.
 */
async function runSets(servers: Measured[], specs: EndpointSpec[], shared: Shared): Promise<Array<SetResult & { cookies: string[] }>> {
	const { standIns, config } = shared
	const results = servers.map(() => [] as EndpointResult[])
	const setPeaks = servers.map((server) => server.sampler.phase())
	// Each set (each round and each server) mints its own users, so repeated rounds do the same work.
	const cookies = servers.map((server) =>
		specs.some((spec) => spec.signedIn) ? mintUsers(standIns, USERS, server.meta.id.replace(/\W/g, '')) : [],
	)
	for (const spec of specs) {
		const active = [...servers.keys()].filter((index) => servers[index]!.only?.includes(spec.id) ?? true)
		const ours = active.at(-1)!
		const anchors = active.slice(0, -1)
		const paired = anchors.length > 0
		const order = paired ? [...anchors, ours, ours, ...anchors.toReversed()] : [ours]
		// autocannon runs whole seconds (it stops at its 1 s sample tick): halves are whole too.
		const sliceSeconds = paired ? Math.max(1, Math.round(config.seconds / 2)) : config.seconds
		const requests = servers.map((_, index): LoadRequest => {
			const users = spec.signedIn ? cookies[index] : undefined
			return { method: spec.method, path: spec.path, headers: spec.headers, body: spec.body, cookies: users }
		})
		const next = servers.map(() => 0)
		const labels = active.map((index) => servers[index]!.meta.label).join(' | ')
		process.stdout.write(`  ${labels}: ${endpointName(spec)} `)
		if (config.warmup > 0) {
			for (const index of active) {
				const server = servers[index]!
				const warm = await runLoad(server.target.url, requests[index]!, { seconds: config.warmup, connections: config.connections })
				next[index] = warm.nextCookie
			}
			process.stdout.write('(warmed) ')
		}
		const slices = servers.map(() => [] as Slice[])
		for (const index of order) {
			// The rotation continues where the warm-up (or the server's previous slice) stopped.
			const slice = await measureSlice(servers[index]!, { ...requests[index]!, startAt: next[index] }, sliceSeconds, shared)
			next[index] = slice.load.nextCookie
			slices[index]!.push(slice)
		}
		const lines: string[] = []
		for (const index of active) {
			const server = servers[index]!
			const merged = mergeSlices(slices[index]!)
			const result = summarize(spec, merged.load, {
				peakRssMb: merged.peakRssMb,
				cpu: merged.cpu,
				serverLog: merged.serverLog,
				usersInRotation: requests[index]!.cookies?.length,
			})
			if (spec.id === 'contact') result.mailsAccepted = merged.mails
			if (spec.id === 'checkout') result.checkoutSessionsCreated = merged.sessions
			if (paired) {
				result.slices = slices[index]!.map(({ load }) => ({ seconds: load.duration, okRps: okResponses(load) / (load.duration || 1) }))
			}
			results[index]!.push(result)
			lines.push(
				`${paired ? `${server.meta.server} ` : ''}${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(1)} ms, CPU server ${result.cpu.serverPct?.toFixed(0)}% machine ${result.cpu.machinePct.toFixed(0)}%` +
					(result.errors || result.rateLimited ? `, ${result.errors} errors, ${result.rateLimited}× 429` : ''),
			)
		}
		clearStandInRecords(standIns)
		console.log(lines.join('; '))
		await sleep(300)
	}
	const peaks = setPeaks.map((end) => end())
	await sleep(1000) // let the servers idle before reading their resident memory
	// Each set was measured beside the others of this call: its ratios are taken against those sets.
	return servers.map((server, index) => {
		const after = server.sampler.now()
		const beside = servers.filter((_, other) => other !== index).map((other) => other.meta.id)
		return {
			...server.meta,
			...(beside.length > 0 ? { beside } : {}),
			endpoints: results[index]!,
			peakRssMb: Math.max(peaks[index]!, after?.rssMb ?? 0),
			rssAfterMb: after?.rssMb ?? null,
			hwmMb: after?.hwmMb ?? null,
			startupMs: server.target.startupMs,
			cookies: cookies[index]!,
		}
	})
}

/** 2xx responses of one load run: what the ratios and targets count. */
function okResponses(load: LoadResult) {
	return Object.entries(load.statusCodeStats)
		.filter(([status]) => status.startsWith('2'))
		.reduce((sum, [, { count }]) => sum + count, 0)
}

// ---------------------------------------------------------------------------------------------------
// Build

async function ensureBuild(config: Config) {
	const newer = sourcesNewerThanBuild(projectRoot)
	const exists = newer !== null
	const staleBy = newer ?? []
	const reason = !exists
		? 'no build'
		: config.build === '1'
			? 'BENCH_BUILD=1'
			: staleBy.length > 0 && config.build === 'auto'
				? 'sources newer than the build'
				: null
	if (reason && config.build !== '0') {
		console.log(`Building (${reason}): npm run build`)
		// vite-node runs this script with NODE_ENV=development: a build inheriting it ships React's
		// development bundles (measured: 146 instead of 90 KiB of JavaScript per page, slower renders).
		const proc = spawnTracked('npm', ['run', 'build'], { cwd: projectRoot, env: { ...process.env, NODE_ENV: 'production' } })
		proc.child.stdout!.pipe(process.stdout)
		proc.child.stderr!.pipe(process.stderr)
		const code = await new Promise<number | null>((resolve) => proc.child.once('exit', resolve))
		if (code !== 0) throw new Error(`npm run build failed (exit ${code})`)
		return { built: true, reason, staleBy: [] as string[] }
	}
	if (!exists) throw new Error('No build (build/server/index.js) and BENCH_BUILD=0: run npm run build first.')
	if (staleBy.length > 0) {
		console.warn(
			`warning: the build is older than ${staleBy.length} source file(s) (${staleBy.slice(0, 5).join(', ')}…): measuring the old build.`,
		)
	}
	return { built: false, reason: null, staleBy }
}

// ---------------------------------------------------------------------------------------------------

function git(args: string[]) {
	try {
		return execFileSync('git', args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'ignore'] })
			.toString()
			.trim()
	} catch {
		return ''
	}
}

async function main() {
	const config = readConfig()
	const runPostgres = config.only !== 'embedded'
	const runEmbedded = config.only !== 'postgres'
	const serverSets = (runPostgres ? 2 : 0) + (runEmbedded ? 1 : 0) + 1
	const selected = config.endpoints ? ENDPOINTS.filter((spec) => config.endpoints!.includes(spec.id)) : ENDPOINTS
	// Per endpoint: a warm-up and the measured seconds on each server of a round (up to three, paired).
	const endpointRuns = ENDPOINTS.length * 3 * ((runPostgres ? config.rounds : 0) + (runEmbedded ? 1 : 0))
	// Every run, every start-up (migrations included) and teardown, with room to spare: never hang.
	const watchdogMs = (endpointRuns * (config.seconds + config.warmup + 20) + (serverSets + 1) * 240 + 900) * 1000
	installExitHandlers({ watchdogMs })

	const startedAt = new Date()
	const commit = git(['rev-parse', '--short', 'HEAD']) || 'nogit'
	const dirty = git(['status', '--porcelain']).length > 0
	console.log(
		`bench: ${config.connections} connections, ${config.warmup} s warm-up + ${config.seconds} s per endpoint; ` +
			`commit ${commit}${dirty ? ' (uncommitted changes)' : ''}; ${os.cpus().length} CPUs, load ${os
				.loadavg()
				.map((l) => l.toFixed(2))
				.join(' ')}`,
	)
	const build = await ensureBuild(config)
	if (runPostgres && !findPostgresBin())
		throw new Error('PostgreSQL binaries not found (apt-get install -y postgresql), or run with BENCH_ONLY=embedded')

	const tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'callsheet-bench-'))
	onCleanup('temp folder', () => fs.rmSync(tempRoot, { recursive: true, force: true }))
	const standIns = await startStandIns()
	onCleanup('stand-ins', () => standIns.close())
	const mail = await startLeanSmtp()
	onCleanup('mail sink', () => mail.close())
	// Servers mail through the lean sink, not the parsing test sink (see lib/lean-smtp.ts).
	standIns.env.SMTP_URL = mail.url
	const processor = await startLeanStripe()
	onCleanup('payment processor', () => processor.close())
	// And pay through the lean processor, not the test fake (see lib/lean-stripe.ts).
	standIns.env.STRIPE_API_URL = processor.url

	let postgres: TestPostgres | undefined
	if (runPostgres) {
		console.log('PostgreSQL: starting a throwaway cluster and migrating a template database…')
		postgres = await startTestPostgres()
		const cluster = postgres
		onCleanup('PostgreSQL', () => cluster.stop())
		await createDatabase(cluster.adminUrl, 'bench_template')
		await runPrismaMigrateDeploy({ projectRoot, query: async () => ({ rows: [] }), databaseUrl: cluster.url('bench_template') })
	}
	const freshPostgres = async (name: string) => {
		await createDatabase(postgres!.adminUrl, name, 'bench_template')
		return postgres!.url(name)
	}
	const freshEmbedded = (name: string) => `file:${path.join(tempRoot, name, 'pglite')}`

	const sets: SetResult[] = []
	let clientWeight: PageWeight[] = []

	const keep = (results: Array<SetResult & { cookies: string[] }>) => {
		// A server none of the selected endpoints was measured on (the bare anchor without health) has no set.
		for (const { cookies: _cookies, ...set } of results) if (set.endpoints.length > 0) sets.push(set)
		return results
	}
	const shared: Shared = { standIns, mail, processor, config }
	const measured = (target: Target, meta: SetMeta, only?: EndpointId[]): Measured => ({
		target,
		meta,
		sampler: new RssSampler(target.pid),
		...(only ? { only } : {}),
	})
	const stopAll = async (servers: Measured[]) => {
		for (const server of servers) server.sampler.stop()
		await Promise.all(servers.map((server) => server.target.stop()))
	}
	const roundLabel = (round: number | undefined) => (round === undefined ? '' : ` · round ${round}`)

	// The anchors (decision 0027), each measured beside ours in every round of the database kind measured
	// first (PostgreSQL when it runs): the bare node:http server on health alone, this machine's limit;
	// and the same build under stock remix-serve on that database kind.
	const remixDb = runPostgres ? 'postgres' : 'embedded'
	const bareMeta = (round: number): SetMeta => ({
		id: `bare-${round}`,
		label: `node:http (bare)${roundLabel(round)}`,
		server: 'node:http',
		database: 'none',
		round,
		anchor: true,
	})
	const remixMeta = (round: number): SetMeta => ({
		id: `remix-serve-${round}`,
		label: `remix-serve · ${remixDb}${roundLabel(round)}`,
		server: 'remix-serve',
		database: remixDb,
		round,
		anchor: true,
	})
	const oursPostgresMeta = (round: number): SetMeta => ({
		id: `ours-postgres-${round}`,
		label: `ours · postgres${roundLabel(round)}`,
		server: 'ours',
		database: 'postgres',
		round,
		anchor: false,
	})
	// JavaScript and CSS each page ships, read from ours; the account page as the signed-in `cookie` sees it.
	const weighPages = (url: string, cookie: string | undefined) =>
		measureClientWeight(
			url,
			[{ path: '/' }, { path: '/pricing' }, { path: '/contact' }, { path: '/account', cookie }],
			path.join(projectRoot, 'build/client'),
		)
	const anchors: Measured[] = []
	const startAnchors = async () => {
		if (!config.anchors) return
		console.log('\nAnchors: bare node:http, and remix-serve on ' + remixDb + ' (starting; a fresh database is migrated first)')
		anchors.push(measured(await startBare(), bareMeta(1), ['health']))
		const remix = await startRemixServe(
			`remix-serve · ${remixDb}`,
			runPostgres ? await freshPostgres('bench_remix_serve') : freshEmbedded('remix-serve'),
			standIns,
		)
		// remix-serve first: for health the slices run remix-serve, bare, ours, ours, bare, remix-serve.
		anchors.unshift(measured(remix, remixMeta(1)))
	}

	try {
		// Inside the try: when an anchor fails to start, those started before it are stopped too.
		await startAnchors()
		const [remixAnchor, bareAnchor] = anchors
		if (runPostgres) {
			console.log(
				`\nOurs on PostgreSQL (${config.rounds} identical round(s) on one server${anchors.length ? ', each beside the anchors' : ''})`,
			)
			const ours = await startOurs('ours · postgres', await freshPostgres('bench_ours'), standIns, config.nodeArgs)
			const oursMeasured = measured(ours, oursPostgresMeta(1))
			try {
				let lastCookies: string[] = []
				for (let round = 1; round <= config.rounds; round++) {
					oursMeasured.meta = oursPostgresMeta(round)
					if (remixAnchor) remixAnchor.meta = remixMeta(round)
					if (bareAnchor) bareAnchor.meta = bareMeta(round)
					const results = keep(await runSets([...anchors, oursMeasured], selected, shared))
					lastCookies = results.at(-1)!.cookies
				}
				clientWeight = await weighPages(ours.url, lastCookies[0] ?? mintUsers(standIns, 1, 'weight')[0])
			} finally {
				await stopAll([oursMeasured])
			}
		}

		if (runEmbedded) {
			// Beside the anchors only when they run on this kind (BENCH_ONLY=embedded); otherwise compared
			// with the PostgreSQL rounds' first anchors.
			const beside = runPostgres ? [] : anchors
			console.log('\nOurs on the embedded database (starting; a fresh database is migrated first)')
			const ours = await startOurs('ours · embedded', freshEmbedded('ours'), standIns, config.nodeArgs)
			const oursMeasured = measured(ours, {
				id: 'ours-embedded',
				label: 'ours · embedded',
				server: 'ours',
				database: 'embedded',
				anchor: false,
			})
			try {
				const results = keep(await runSets([...beside, oursMeasured], selected, shared))
				if (clientWeight.length === 0) {
					clientWeight = await weighPages(ours.url, results.at(-1)!.cookies[0])
				}
			} finally {
				await stopAll([oursMeasured])
			}
		}
	} finally {
		await stopAll(anchors)
	}

	// Report
	const targets = evaluateTargets(sets)
	const problemLines = problems(sets)
	console.log(`\n${table(sets)}\n`)
	console.log('Server process memory (VmRSS sampled every 200 ms; VmHWM = kernel high-water mark):')
	console.log(`${memoryTable(sets)}\n`)
	console.log('Client weight (gzip, from build/client):')
	console.log(`${weightTable(clientWeight)}\n`)
	console.log('Targets (judged on 2xx responses per second):')
	console.log(`${targetsTable(targets)}\n`)
	if (problemLines.length > 0) console.log(`Non-2xx answers and socket errors:\n${problemLines.join('\n')}\n`)

	const resultsDir = path.join(projectRoot, 'bench/results')
	fs.mkdirSync(resultsDir, { recursive: true })
	const stamp = startedAt
		.toISOString()
		.replace(/\.\d+Z$/, 'Z')
		.replace(/:/g, '-')
	const file = path.join(resultsDir, `${stamp}-${commit}.json`)
	const record = {
		startedAt: startedAt.toISOString(),
		finishedAt: new Date().toISOString(),
		commit,
		dirty,
		partial: Boolean(config.endpoints) || !config.anchors || config.rounds !== 2 || config.nodeArgs.length > 0,
		node: process.version,
		cpus: os.cpus().length,
		loadAverageAtEnd: os.loadavg(),
		config,
		build: { ...build, staleBy: build.staleBy.slice(0, 50) },
		sets,
		clientWeight,
		targets,
		problems: problemLines,
	}
	fs.writeFileSync(file, `${JSON.stringify(record, null, '\t')}\n`)
	console.log(`Results: ${path.relative(projectRoot, file)}`)
}

let exitCode = 0
try {
	await main()
} catch (error) {
	// After SIGINT the teardown itself makes the run fail: that is not news.
	if (!isBailing()) console.error(`\nbench failed: ${(error as Error).stack ?? String(error)}`)
	exitCode = 1
} finally {
	await cleanupAll()
}
process.exit(exitCode)
