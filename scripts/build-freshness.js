import fs from 'node:fs'
import path from 'node:path'

export const SERVER_BUILD = 'build/server/index.js'

/**
 * The sources changed since the last build (files under app/ other than tests, vite.config.ts,
 * package-lock.json newer than build/server/index.js), relative to `projectRoot`; null when there is
 * no build at all. Tests beside the code (`*.test.*`) are not part of the build.
 *
 * @param {string} projectRoot
 * @returns {string[] | null}
 */
export function sourcesNewerThanBuild(projectRoot) {
	const serverBuild = path.join(projectRoot, SERVER_BUILD)
	if (!fs.existsSync(serverBuild)) return null
	const since = fs.statSync(serverBuild).mtimeMs
	/** @type {string[]} */
	const newer = []
	/** @param {string} dir */
	const walk = (dir) => {
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name)
			if (entry.isDirectory()) walk(full)
			else if (!/\.test\.[jt]sx?$/.test(entry.name) && fs.statSync(full).mtimeMs > since) newer.push(path.relative(projectRoot, full))
		}
	}
	walk(path.join(projectRoot, 'app'))
	for (const file of ['vite.config.ts', 'package-lock.json']) {
		const full = path.join(projectRoot, file)
		if (fs.existsSync(full) && fs.statSync(full).mtimeMs > since) newer.push(file)
	}
	return newer
}
