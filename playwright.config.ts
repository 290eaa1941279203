// Browser journeys: `npx playwright test` (or `npm run test:e2e`). Needs a build (`npm run build`).
// e2e/support/global-setup.ts starts the stand-ins and `node server/start.js` on a free port with a
// fresh embedded database; tests read the app's URL from E2E_BASE_URL (see e2e/support/env.ts).
import { defineConfig } from '@playwright/test'
import { CHROMIUM_MISSING_MESSAGE, CHROMIUM_PATH, chromiumAvailable } from './e2e/support/env.ts'

const isCI = process.env.CI === 'true'

// No browser download is possible here: Debian's Chromium is the browser. In CI its absence is a
// broken environment, not a reason to go green.
if (!chromiumAvailable) {
	if (isCI)
		throw new Error(
			`CI=true and ${CHROMIUM_MISSING_MESSAGE.replace('browser journeys are skipped.', 'refusing to skip the browser journeys.')}`,
		)
	if (!process.env.E2E_BROWSER_WARNED) {
		process.env.E2E_BROWSER_WARNED = '1'
		console.warn(`\n[e2e] ${CHROMIUM_MISSING_MESSAGE}\n`)
	}
}

export default defineConfig({
	testDir: './e2e',
	testMatch: '**/*.spec.ts',
	outputDir: 'test-results/e2e',
	globalSetup: './e2e/support/global-setup.ts',
	fullyParallel: false,
	workers: 2,
	retries: 0,
	timeout: 30_000,
	expect: { timeout: 5_000 },
	forbidOnly: isCI,
	reporter: [['list'], ['json', { outputFile: 'test-results/e2e-results.json' }]],
	use: {
		browserName: 'chromium',
		viewport: { width: 1280, height: 800 },
		trace: 'retain-on-failure',
		screenshot: 'only-on-failure',
		launchOptions: {
			executablePath: CHROMIUM_PATH,
			args: [
				'--no-sandbox',
				'--disable-gpu',
				'--disable-background-networking',
				'--disable-component-update',
				'--disable-sync',
				'--no-first-run',
				'--disable-quic',
			],
		},
	},
})
