import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'

// npm 11 (Node 24's, and this machine's) refuses `npm ci` when the lockfile lacks an entry for any
// optional dependency of a locked package, on every platform (rollup's native builds), and `npm
// install` rewrites the file. A lockfile written by an older npm left them out: a fresh clone's
// `npm install` dirtied it, and the README's deploy step `npm ci` failed.
test('package-lock.json locks every optional dependency of every locked package, as npm 11 requires', () => {
	const lock = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../package-lock.json'), 'utf8')) as {
		packages: Record<string, { optionalDependencies?: Record<string, string> }>
	}
	const missing: string[] = []
	for (const [location, entry] of Object.entries(lock.packages)) {
		for (const name of Object.keys(entry.optionalDependencies ?? {})) {
			// Resolved as node does: beside the package, then in each node_modules folder up to the root.
			const candidates: string[] = []
			for (let base = location; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
				candidates.push(`${base ? `${base}/` : ''}node_modules/${name}`)
				if (!base) break
			}
			if (!candidates.some((candidate) => candidate in lock.packages)) missing.push(`${name} (for ${location || 'the project'})`)
		}
	}
	expect(missing).toEqual([])
})
