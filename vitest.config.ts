import { defineConfig } from 'vitest/config'

// Two projects: unit tests beside the code, and integration tests that boot the real built server.
// The integration project runs twice under `npm test`: on the embedded database and on PostgreSQL
// (TEST_DATABASE=embedded|postgres), see scripts/test.js.
export default defineConfig({
	test: {
		// Each integration file boots its own server: two at a time suits this two-core machine.
		maxWorkers: 2,
		minWorkers: 1,
		projects: [
			{
				test: {
					name: 'unit',
					include: ['app/**/*.test.{ts,tsx}', 'server/**/*.test.{js,ts}', 'tests/mocks-selftest/**/*.test.ts', 'bench/**/*.test.ts'],
					environment: 'node',
					testTimeout: 30_000,
					setupFiles: ['tests/support/fail-on-console-error.ts'],
				},
			},
			{
				test: {
					name: 'integration',
					include: ['tests/integration/**/*.test.ts'],
					environment: 'node',
					globalSetup: ['tests/support/global-setup.ts'],
					setupFiles: ['tests/support/fail-on-console-error.ts', 'tests/support/fail-on-server-error.ts'],
					testTimeout: 60_000,
					hookTimeout: 120_000,
					pool: 'forks',
					poolOptions: { forks: { singleFork: false } },
				},
			},
		],
	},
})
