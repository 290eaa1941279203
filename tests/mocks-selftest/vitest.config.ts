// Runs only the stand-ins' own tests, independent of the app's vitest projects:
//   npx vitest run --config tests/mocks-selftest/vitest.config.ts
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
	root: fileURLToPath(new URL('../..', import.meta.url)),
	test: {
		include: ['tests/mocks-selftest/**/*.test.ts'],
		environment: 'node',
		testTimeout: 15_000,
	},
})
