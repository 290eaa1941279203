import fs from 'node:fs'
import path from 'node:path'

export const SERVER_BUILD = 'build/server/index.js'

// Not sources of the build: tests beside the code, and Prisma's client, which `npm install` generates
// again (postinstall) into app/generated on every install.
const NOT_BUILD_INPUT = /\.test\.[jt]sx?$/
const GENERATED = path.join('app', 'generated')

/**
 * The sources changed since the last build (files under app/, vite.config.ts, package-lock.json newer
 * than build/server/index.js), relative to `projectRoot`; null when there is no build at all.
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
			if (entry.isDirectory()) {
				if (path.relative(projectRoot, full) !== GENERATED) walk(full)
			} else if (!NOT_BUILD_INPUT.test(entry.name) && fs.statSync(full).mtimeMs > since) newer.push(path.relative(projectRoot, full))
		}
	}
	// A deployment may ship the build without the sources.
	if (fs.existsSync(path.join(projectRoot, 'app'))) walk(path.join(projectRoot, 'app'))
	for (const file of ['vite.config.ts', 'package-lock.json']) {
		const full = path.join(projectRoot, file)
		if (fs.existsSync(full) && fs.statSync(full).mtimeMs > since) newer.push(file)
	}
	return newer
}

/**
 * What start-up and the operator scripts say of a build older than its sources.
 *
 * @param {string[]} newer
 */
export function staleBuildWarning(newer) {
	return `warning: the build is older than ${newer.length} source file(s) (${newer.slice(0, 3).join(', ')}): run npm run build, then restart, to serve them`
}
