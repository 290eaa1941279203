import type { PageWeight } from './client-weight.ts'
import type { CpuUsage } from './cpu.ts'
import type { LoadResult } from './load.ts'

export type EndpointId = 'health' | 'pricing' | 'pricing-rendered' | 'billing-status' | 'contact' | 'checkout' | 'delete-request'

export type EndpointResult = {
	endpoint: EndpointId
	method: string
	path: string
	/** What sets this request apart from another to the same path. */
	variant?: string
	/** All responses per second (any status). */
	rps: number
	/** 2xx responses per second: what the ratios and targets use. */
	okRps: number
	p50Ms: number
	p99Ms: number
	/** Non-2xx other than 429, plus socket errors and timeouts. */
	errors: number
	rateLimited: number
	socketErrors: number
	statusCounts: Record<string, number>
	/** First bodies of each non-2xx status. */
	errorSamples: Record<string, string[]>
	/** Server log lines other than the per-request log, during the measured run. */
	serverLog: string[]
	peakRssMb: number
	cpu: CpuUsage
	usersInRotation?: number
	/** POST /api/contact: messages the mail sink accepted during the run. */
	mailsAccepted?: number
	/** POST /api/billing/checkout: checkout sessions the payment processor created during the run. */
	checkoutSessionsCreated?: number
	/** Measured beside an anchor: each slice's length and 2xx/s, in the order they ran. */
	slices?: Array<{ seconds: number; okRps: number }>
	load: LoadResult
}

export type SetResult = {
	id: string
	label: string
	server: 'node:http' | 'ours' | 'remix-serve'
	database: 'none' | 'postgres' | 'embedded'
	round?: number
	anchor: boolean
	/** The ids of the sets measured beside this one, in alternating slices (decision 0027). */
	beside?: string[]
	endpoints: EndpointResult[]
	/** Highest VmRSS sampled while this set ran (MB). */
	peakRssMb: number
	/** VmRSS once the set finished and the server idled for a second (MB). */
	rssAfterMb: number | null
	/** The kernel's high-water mark (VmHWM) at the end of the set (MB). */
	hwmMb: number | null
	startupMs?: number
}

export type Target = { name: string; measured: string; threshold: string; met: boolean | null; note?: string }

const API_ENDPOINTS: EndpointId[] = ['billing-status', 'contact', 'checkout', 'delete-request']

/**
 * The `server` anchor's result that `set` is compared with: the anchor set measured beside it
 * (decision 0027), else the first set of that anchor (the embedded set beside a PostgreSQL run, and
 * runs recorded before 0027, which measured each anchor once).
 */
export function anchorFor(
	sets: SetResult[],
	set: Pick<SetResult, 'beside'>,
	endpoint: EndpointId,
	server: 'remix-serve' | 'node:http' = 'remix-serve',
) {
	const anchors = sets.filter((candidate) => candidate.server === server)
	const beside = anchors.find((anchor) => set.beside?.includes(anchor.id))
	return (beside ?? anchors[0])?.endpoints.find((result) => result.endpoint === endpoint)
}

/** Ratio of 2xx/s to the anchors; null when the anchor did not run or served no 2xx. */
export function ratios(sets: SetResult[], set: SetResult, result: EndpointResult) {
	// Each against the anchor sets measured beside it (anchorFor).
	const bareHealth = anchorFor(sets, set, 'health', 'node:http')
	const remixSame = set.server === 'remix-serve' ? undefined : anchorFor(sets, set, result.endpoint)
	return {
		vsBare: set.server !== 'node:http' && bareHealth?.okRps ? result.okRps / bareHealth.okRps : null,
		vsRemixServe: remixSame?.okRps ? result.okRps / remixSame.okRps : null,
	}
}

/**
 * The server process's CPU time per response (µs): its CPU share over its responses per second. Not a
 * target (the targets are requests per second), but the server's own cost, which the share of a core
 * it gets on a busy two-core machine does not move (decision 0027).
 */
export function cpuPerRequestUs(result: Pick<EndpointResult, 'cpu' | 'rps'>): number | null {
	if (result.cpu.serverPct === null || result.rps <= 0) return null
	return ((result.cpu.serverPct / 100) * 1e6) / result.rps
}

/** `GET /pricing`, or `GET /pricing (variant)` for a second request to the same path. */
export const endpointName = (result: Pick<EndpointResult, 'method' | 'path' | 'variant'>) =>
	`${result.method} ${result.path}${result.variant ? ` (${result.variant})` : ''}`

const fmt = (value: number | null | undefined, digits = 0) =>
	value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits)
const ratio = (value: number | null) => (value === null ? '–' : `${value.toFixed(value < 10 ? 2 : 1)}×`)

export function table(sets: SetResult[]): string {
	const header = [
		'server',
		'endpoint',
		'req/s',
		'2xx/s',
		'p50 ms',
		'p99 ms',
		'errors',
		'429',
		'peak RSS MB',
		'CPU % srv/all',
		'CPU µs/req',
		'× node:http',
		'× remix-serve',
	]
	const rows: string[][] = [header]
	for (const set of sets) {
		for (const result of set.endpoints) {
			const { vsBare, vsRemixServe } = ratios(sets, set, result)
			rows.push([
				set.label,
				endpointName(result),
				fmt(result.rps),
				fmt(result.okRps),
				fmt(result.p50Ms, 1),
				fmt(result.p99Ms, 1),
				String(result.errors),
				String(result.rateLimited),
				fmt(result.peakRssMb, 1),
				`${fmt(result.cpu.serverPct)}/${fmt(result.cpu.machinePct)}`,
				fmt(cpuPerRequestUs(result)),
				ratio(vsBare),
				ratio(vsRemixServe),
			])
		}
	}
	const widths = header.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
	const line = (row: string[]) =>
		`| ${row.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`
	const separator = `|${widths.map((width, column) => (column < 2 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`
	return [line(rows[0]!), separator, ...rows.slice(1).map(line)].join('\n')
}

export function memoryTable(sets: SetResult[]): string {
	const rows = [
		'| server | peak VmRSS MB (sampled) | VmHWM MB at end | VmRSS MB after the set |',
		'|:--|--:|--:|--:|',
		...sets.map((set) => `| ${set.label} | ${fmt(set.peakRssMb, 1)} | ${fmt(set.hwmMb, 1)} | ${fmt(set.rssAfterMb, 1)} |`),
	]
	return rows.join('\n')
}

export function weightTable(weights: PageWeight[]): string {
	return [
		'| page | status | JS files | JS gzip KiB | CSS files | CSS gzip KiB |',
		'|:--|--:|--:|--:|--:|--:|',
		...weights.map(
			(w) =>
				`| ${w.path} | ${w.status} | ${w.jsFiles} | ${(w.jsGzipBytes / 1024).toFixed(1)} | ${w.cssFiles} | ${(w.cssGzipBytes / 1024).toFixed(1)} |` +
				(w.missing.length ? ` (missing in build/client: ${w.missing.join(', ')})` : ''),
		),
	].join('\n')
}

/** The issue's targets, judged on 2xx/s; a target whose anchor did not run (or failed) is not judged. */
export function evaluateTargets(sets: SetResult[]): Target[] {
	const targets: Target[] = []
	const ours = sets.filter((set) => set.server === 'ours')
	for (const set of ours) {
		const bareHealth = anchorFor(sets, set, 'health', 'node:http')
		const health = set.endpoints.find((result) => result.endpoint === 'health')
		if (health) {
			const share = bareHealth?.okRps ? health.okRps / bareHealth.okRps : null
			targets.push({
				name: `${set.label}: health ≥ 50% of bare node:http`,
				measured: share === null ? 'no anchor' : `${(share * 100).toFixed(0)}% (${fmt(health.okRps)} vs ${fmt(bareHealth?.okRps)} 2xx/s)`,
				threshold: '≥ 50%',
				met: share === null ? null : share >= 0.5,
			})
		}
		for (const endpoint of [...API_ENDPOINTS, 'pricing'] as EndpointId[]) {
			const result = set.endpoints.find((r) => r.endpoint === endpoint)
			if (!result) continue
			const anchor = anchorFor(sets, set, endpoint)
			const wanted = endpoint === 'pricing' ? 2 : 3
			const anchorBroken = anchor && anchor.okRps === 0
			const multiple = anchor?.okRps ? result.okRps / anchor.okRps : null
			targets.push({
				name: `${set.label}: ${endpointName(result)} ≥ ${wanted}× remix-serve`,
				measured:
					multiple === null
						? anchor
							? `anchor served no 2xx (${describeStatuses(anchor)})`
							: 'no anchor'
						: `${multiple.toFixed(2)}× (${fmt(result.okRps)} vs ${fmt(anchor?.okRps)} 2xx/s${cpuMultiple(result, anchor)})`,
				threshold: `≥ ${wanted}×`,
				met: multiple === null ? null : multiple >= wanted,
				...(anchorBroken ? { note: 'remix-serve answered only errors: no valid comparison' } : {}),
			})
			if (endpoint !== 'pricing') {
				targets.push({
					name: `${set.label}: ${endpointName(result)} p99 ≤ 25 ms`,
					measured: `${fmt(result.p99Ms, 1)} ms${result.okRps === 0 ? ' (no 2xx: latency of error answers)' : ''}`,
					threshold: '≤ 25 ms',
					met: result.okRps === 0 ? false : result.p99Ms <= 25,
				})
			}
		}
	}
	const pgSets = ours.filter((set) => set.database === 'postgres')
	if (pgSets.length > 0) {
		const peak = Math.max(...pgSets.map((set) => Math.max(set.peakRssMb, set.hwmMb ?? 0)))
		targets.push({ name: 'ours · postgres: peak RSS ≤ 200 MB', measured: `${peak.toFixed(1)} MB`, threshold: '≤ 200 MB', met: peak <= 200 })
	}
	const [first, second] = pgSets
	if (first && second && first.rssAfterMb !== null && second.rssAfterMb !== null) {
		const growth = second.rssAfterMb - first.rssAfterMb
		// Allocator and JIT noise: a few MB either way is not growth.
		const rssGrowthToleranceMb = Math.max(5, first.rssAfterMb * 0.05)
		targets.push({
			name: 'ours · postgres: no RSS growth between two identical rounds',
			measured: `${first.rssAfterMb.toFixed(1)} → ${second.rssAfterMb.toFixed(1)} MB (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB)`,
			threshold: `growth ≤ ${rssGrowthToleranceMb.toFixed(1)} MB`,
			met: growth <= rssGrowthToleranceMb,
		})
	}
	return targets
}

/** "; CPU per request 3.20×": the anchor's CPU time per response over ours, when both were measured. */
function cpuMultiple(result: EndpointResult, anchor: EndpointResult | undefined) {
	const ours = cpuPerRequestUs(result)
	const theirs = anchor ? cpuPerRequestUs(anchor) : null
	return ours && theirs ? `; CPU per request ${(theirs / ours).toFixed(2)}×` : ''
}

export function describeStatuses(result: EndpointResult) {
	return Object.entries(result.statusCounts)
		.map(([status, count]) => `${status}: ${count}`)
		.join(', ')
}

export function targetsTable(targets: Target[]): string {
	return [
		'| target | measured | wanted | met |',
		'|:--|:--|:--|:--|',
		...targets.map(
			(t) =>
				`| ${t.name} | ${t.measured} | ${t.threshold} | ${t.met === null ? 'not judged' : t.met ? 'yes' : '**no**'}${t.note ? ` (${t.note})` : ''} |`,
		),
	].join('\n')
}

/** Every run that answered anything but 2xx, with what it answered and what the server logged. */
export function problems(sets: SetResult[]): string[] {
	const lines: string[] = []
	for (const set of sets) {
		for (const result of set.endpoints) {
			if (result.errors === 0 && result.rateLimited === 0) continue
			lines.push(
				`${set.label} ${endpointName(result)}: ${describeStatuses(result)}` +
					(result.socketErrors ? `, socket errors/timeouts: ${result.socketErrors}` : ''),
			)
			for (const [status, bodies] of Object.entries(result.errorSamples)) {
				for (const body of new Set(bodies)) lines.push(`    ${status} ${body.replace(/\s+/g, ' ').slice(0, 300)}`)
			}
			for (const logLine of result.serverLog.slice(0, 5)) lines.push(`    log: ${logLine.slice(0, 300)}`)
		}
	}
	return lines
}
