import { vitePlugin as remix } from '@remix-run/dev'
import { execSync } from 'node:child_process'
import { defineConfig } from 'vite'

// The health payload's version when COMMIT_SHA is unset: the commit this build was made from.
function buildCommit() {
	try {
		return execSync('git rev-parse HEAD', { stdio: ['ignore', 'pipe', 'ignore'] })
			.toString()
			.trim()
	} catch {
		return ''
	}
}

export default defineConfig({
	define: { __BUILD_COMMIT__: JSON.stringify(buildCommit()) },
	server: { port: Number(process.env.PORT ?? 3000) },
	build: { target: 'es2022', sourcemap: false },
	plugins: [
		remix({
			// Server-only and test files never become routes (house style).
			ignoredRouteFiles: ['**/*.server.*', '**/*.test.*', '**/__*'],
			future: {
				v3_fetcherPersist: true,
				v3_relativeSplatPath: true,
				v3_throwAbortReason: true,
				v3_lazyRouteDiscovery: true,
			},
		}),
	],
})
