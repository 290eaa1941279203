import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

// `npm test`: every test, in the order a failure is cheapest to find. Builds first (integration and
// browser tests run the real production build), then unit, integration on the embedded database,
// integration on a throwaway PostgreSQL, and the Playwright journeys. Under CI=true a missing
// PostgreSQL or browser fails the run instead of skipping it. The last line counts everything.

const ci = process.env.CI === 'true'
const resultsDir = path.resolve('test-results')
fs.mkdirSync(resultsDir, { recursive: true })
const totals = { passed: 0, failed: 0, skipped: 0 }
const problems = []
const skippedRuns = []
// Each failed test, named again at the very end: CI may keep only the tail of a long run.
const failures = []

function firstLine(message) {
	const line =
		String(message ?? '')
			.replace(/\x1b\[[0-9;]*m/g, '')
			.split('\n')
			.find((text) => text.trim() !== '') ?? ''
	return line.trim().slice(0, 300)
}

function run(label, command, args, env = {}) {
	console.log(`\n=== ${label} ===`)
	const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } })
	return result.status === 0
}

/** Names are a help, never a result: a report of another shape names nothing and fails nothing. */
function namingFailures(work) {
	try {
		work()
	} catch (error) {
		failures.push(`(the failed tests could not be named: ${error.message}; see the output above)`)
	}
}

function nameVitestFailures(report, label) {
	namingFailures(() => {
		for (const file of report.testResults) {
			const where = path.relative(process.cwd(), file.name)
			for (const test of file.assertionResults) {
				if (test.status === 'failed') failures.push(`${label}: ${where} › ${test.fullName}\n    ${firstLine(test.failureMessages?.[0])}`)
			}
			// A file that failed outside its tests (an import, a hook) has no failed test to name.
			if (file.status === 'failed' && !file.assertionResults.some((test) => test.status === 'failed')) {
				failures.push(`${label}: ${where}\n    ${firstLine(file.message) || '(failed outside its tests: see the output above)'}`)
			}
		}
	})
}

function addVitest(file, label, ok) {
	try {
		const report = JSON.parse(fs.readFileSync(file, 'utf8'))
		totals.passed += report.numPassedTests
		totals.failed += report.numFailedTests
		totals.skipped += report.numPendingTests + report.numTodoTests
		nameVitestFailures(report, label)
		if (!ok && report.numFailedTests === 0) problems.push(`${label} failed outside any test (see its output)`)
	} catch {
		problems.push(`${label} produced no report`)
	}
}

function vitest(label, project, file, env = {}) {
	const out = path.join(resultsDir, file)
	fs.rmSync(out, { force: true })
	const ok = run(label, 'npx', ['vitest', 'run', '--project', project, '--reporter=default', '--reporter=json', `--outputFile=${out}`], env)
	addVitest(out, label, ok)
}

const hasPostgres = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin', process.env.PG_BIN]
	.filter(Boolean)
	.some((dir) => fs.existsSync(path.join(dir, 'initdb')))
const hasBrowser = fs.existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')

if (!run('build', 'npm', ['run', 'build', '--silent'])) {
	console.log('\nThe build failed: no tests ran.\n0 passed, 1 failed')
	process.exit(1)
}

vitest('unit tests', 'unit', 'unit.json')
vitest('integration tests on the embedded database (PGlite)', 'integration', 'integration-embedded.json', { TEST_DATABASE: 'embedded' })

if (hasPostgres) {
	vitest('integration tests on PostgreSQL', 'integration', 'integration-postgres.json', { TEST_DATABASE: 'postgres' })
} else if (ci) {
	problems.push('PostgreSQL is not installed (apt-get install -y postgresql): required under CI=true')
} else {
	console.log('\n(PostgreSQL is not installed: the PostgreSQL integration run is skipped. apt-get install -y postgresql)')
	skippedRuns.push('the PostgreSQL integration run (no PostgreSQL)')
}

function collectPlaywrightFailures(suites, titles) {
	for (const suite of suites ?? []) {
		const inside = suite.file === suite.title ? [suite.file] : [...titles, suite.title]
		for (const spec of suite.specs ?? []) {
			for (const test of spec.tests) {
				if (test.status !== 'unexpected') continue
				const error = test.results.at(-1)?.errors?.[0]?.message
				failures.push(
					`browser journeys: e2e/${spec.file}:${spec.line} › ${[...inside.slice(1), spec.title].join(' › ')}\n    ${firstLine(error)}`,
				)
			}
		}
		collectPlaywrightFailures(suite.suites, inside)
	}
}

if (hasBrowser) {
	const out = path.join(resultsDir, 'e2e-results.json')
	fs.rmSync(out, { force: true })
	const ok = run('browser journeys (Playwright, Chromium)', 'npx', ['playwright', 'test'])
	try {
		const { stats } = JSON.parse(fs.readFileSync(out, 'utf8'))
		totals.passed += stats.expected + stats.flaky
		totals.failed += stats.unexpected
		totals.skipped += stats.skipped
		namingFailures(() => {
			const report = JSON.parse(fs.readFileSync(out, 'utf8'))
			collectPlaywrightFailures(report.suites, [])
			// Outside any test: the global set-up, the app's server failing to start.
			for (const error of report.errors ?? []) failures.push(`browser journeys, outside any test:\n    ${firstLine(error.message)}`)
		})
		if (!ok && stats.unexpected === 0) problems.push('the browser journeys failed outside any test')
	} catch {
		problems.push('the browser journeys produced no report')
	}
} else if (ci) {
	problems.push('Chromium is not installed (apt-get install -y chromium): required under CI=true')
} else {
	console.log('\n(Chromium is not installed: browser journeys are skipped. apt-get install -y chromium)')
	skippedRuns.push('the browser journeys (no Chromium)')
}

console.log('')
for (const failure of failures) console.log(`failed: ${failure}`)
for (const problem of problems) console.log(`problem: ${problem}`)
const failed = totals.failed + problems.length
const notRun = skippedRuns.length > 0 ? `; not run: ${skippedRuns.join(', ')}` : ''
console.log(`${totals.passed} passed, ${failed} failed, ${totals.skipped} skipped${notRun}`)
process.exit(failed > 0 ? 1 : 0)
