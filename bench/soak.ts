import fs from 'node:fs'
import { runPrismaMigrateDeploy } from '../app/utils/db/migrate.server.ts'
import { startStandIns } from '../tests/mocks/serve-all.ts'
import { startApp } from '../tests/support/app-server.ts'
import { createDatabase, startTestPostgres } from '../tests/support/postgres.ts'
import { projectRoot } from '../tests/support/project.ts'
import { newClerkUserId, sessionHeaders } from '../tests/support/sessions.ts'
import { startLeanSmtp } from './lib/lean-smtp.ts'

// `npm run soak`: a mixed load on every endpoint against PostgreSQL for SOAK_SECONDS (default 180),
// loopback only, bounded in time. Every WINDOW seconds it reports requests, errors, p99 and the
// server's RSS; it fails on any error or if RSS in the last third of the run is above the first
// third's by more than max(10 MB, 5 %).

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180)
const WINDOW = Number(process.env.SOAK_WINDOW ?? 15)
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8)

if (!fs.existsSync(`${projectRoot}/build/server/index.js`)) throw new Error('No build: run npm run build first.')
const postgres = await startTestPostgres()
const smtp = await startLeanSmtp()
const standIns = await startStandIns()
await createDatabase(postgres.adminUrl, 'soak')
const databaseUrl = postgres.url('soak')
await runPrismaMigrateDeploy({ projectRoot, query: async () => ({ rows: [] }), databaseUrl })
const app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env, SMTP_URL: smtp.url, BENCH_RAISE_LIMITS: '1' })

const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${app.process.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
let userCounter = 0
function freshUser() {
	const id = newClerkUserId()
	standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
	userCounter++
	return id
}
/** Each user makes a handful of writes, well under the per-user limits. */
function rotatingUsers() {
	let current = freshUser()
	let uses = 0
	return () => {
		if (++uses > 5) {
			current = freshUser()
			uses = 0
		}
		return current
	}
}
// Users who buy are not the users who leave: checkout refuses anyone with a pending deletion
// request (409, decision 0020), which would count as errors here.
const buyer = rotatingUsers()
const leaver = rotatingUsers()

const json = { 'Content-Type': 'application/json' }
const mix: Array<() => Promise<Response>> = [
	() => fetch(`${app.url}/api/health`),
	() => fetch(`${app.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, buyer()) }),
	() => fetch(`${app.url}/pricing`),
	() =>
		fetch(`${app.url}/api/contact`, {
			method: 'POST',
			headers: json,
			body: JSON.stringify({ name: 'Soak', email: 'soak@example.com', subject: 'Load', message: 'Hello' }),
		}),
	() =>
		fetch(`${app.url}/api/billing/checkout`, {
			method: 'POST',
			headers: { ...json, ...sessionHeaders(standIns.clerk, buyer()) },
			body: '{"plan":"team"}',
		}),
	() => {
		const id = leaver()
		return fetch(`${app.url}/api/account/delete-request`, {
			method: 'POST',
			headers: { ...json, ...sessionHeaders(standIns.clerk, id) },
			body: JSON.stringify({ confirmEmail: `${id}@example.com` }),
		})
	},
]

type Window = { at: number; requests: number; errors: number; p99: number; rssMb: number }
const windows: Window[] = []
const errorSamples: string[] = []
const deadline = Date.now() + SECONDS * 1000
let latencies: number[] = []
let requests = 0
let errors = 0
let windowStart = Date.now()

async function worker(offset: number) {
	let i = offset
	while (Date.now() < deadline) {
		const call = mix[i++ % mix.length]!
		const started = performance.now()
		try {
			const response = await call()
			await response.arrayBuffer()
			if (response.status >= 300) {
				errors++
				if (errorSamples.length < 5) errorSamples.push(`${response.status} ${response.url}`)
			}
		} catch (error) {
			errors++
			if (errorSamples.length < 5) errorSamples.push(String(error))
		}
		latencies.push(performance.now() - started)
		requests++
		if (Date.now() - windowStart >= WINDOW * 1000) closeWindow()
	}
}

function closeWindow() {
	const sorted = latencies.sort((a, b) => a - b)
	windows.push({
		at: Math.round((Date.now() - (deadline - SECONDS * 1000)) / 1000),
		requests,
		errors,
		p99: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
		rssMb: rss(),
	})
	const w = windows.at(-1)!
	console.log(
		`t=${String(w.at).padStart(4)}s  ${String(w.requests).padStart(6)} req  ${w.errors} errors  p99 ${w.p99.toFixed(1)} ms  RSS ${w.rssMb.toFixed(0)} MB`,
	)
	latencies = []
	requests = 0
	errors = 0
	windowStart = Date.now()
}

let failed = false
try {
	console.log(`soak: ${SECONDS} s, ${CONCURRENCY} concurrent clients, windows of ${WINDOW} s, PostgreSQL`)
	await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => worker(i)))
	if (requests > 0) closeWindow()
	const totalErrors = windows.reduce((sum, w) => sum + w.errors, 0)
	// Growth after warm-up: the last third's highest RSS against the highest RSS up to the end of the
	// first third (the first window, start-up and warm-up, excluded). A heap that has settled moves
	// within a few MB; a leak keeps climbing from third to third.
	const measured = windows.slice(1)
	const third = Math.max(1, Math.floor(measured.length / 3))
	const early = Math.max(0, ...measured.slice(0, third).map((w) => w.rssMb))
	const late = Math.max(0, ...measured.slice(-third).map((w) => w.rssMb))
	const allowance = Math.max(10, early * 0.05)
	const growth = late - early
	const peak = Math.max(0, ...windows.map((w) => w.rssMb))
	console.log(
		`total: ${windows.reduce((s, w) => s + w.requests, 0)} requests, ${totalErrors} errors, ${userCounter} users; ` +
			`RSS first third ${early.toFixed(0)} MB → last third ${late.toFixed(0)} MB (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB, allowed +${allowance.toFixed(1)}); peak ${peak.toFixed(0)} MB`,
	)
	for (const sample of errorSamples) console.log(`  error: ${sample}`)
	failed = totalErrors > 0 || measured.length < 3 || growth > allowance
	console.log(failed ? 'soak: FAILED' : 'soak: passed')
} finally {
	await app.stop()
	await standIns.close()
	await smtp.close()
	await postgres.stop()
}
process.exit(failed ? 1 : 0)
