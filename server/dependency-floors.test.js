import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

// docs/security.md "React Router inside Remix": @remix-run/react pins React Router versions that
// GHSA-jjmj-jmhj-qwj2 affects, and package.json's overrides replace them. These are the copies the
// browser bundle and the server actually load; if an install ever drops the overrides, this fails.
const fromApp = createRequire(import.meta.url)
const fromRemixReact = createRequire(fromApp.resolve('@remix-run/react/package.json'))

function atLeast(version, floor) {
	const [a, b] = [version, floor].map((v) => v.split('.').map(Number))
	for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i]
	return true
}

describe('React Router copies used by Remix carry the open-redirect fix', () => {
	it.each([
		['react-router-dom', '6.30.6'],
		['react-router', '6.30.6'],
		['@remix-run/router', '1.23.4'],
	])('%s ≥ %s', (name, floor) => {
		const { version } = fromRemixReact(`${name}/package.json`)
		expect(atLeast(version, floor), `${name} ${version} resolved from @remix-run/react`).toBe(true)
	})

	it('the server runtime renders with the same fixed router', () => {
		const fromRuntime = createRequire(fromApp.resolve('@remix-run/server-runtime/package.json'))
		expect(atLeast(fromRuntime('@remix-run/router/package.json').version, '1.23.4')).toBe(true)
	})
})
