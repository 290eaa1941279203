import { execSync } from 'node:child_process'
import { sourcesNewerThanBuild, staleBuildWarning } from './build-freshness.js'

// `npm start` (and the operator scripts) on a fresh clone have no build yet: make one, so the quick
// start stays two commands. An existing build is never replaced here: a server may be serving it
// (a build empties build/client under it), a production install may lack the build tools, and two
// instances starting together would build over each other. An older one is said aloud instead.
const newer = sourcesNewerThanBuild(process.cwd())
if (newer === null) {
	console.log('No build found: building once (npm run build)…')
	execSync('npm run build', { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } })
} else if (newer.length > 0 && !process.argv.includes('--build-only')) {
	// npm start passes --build-only: the server says it itself, as it does when started without npm.
	console.warn(staleBuildWarning(newer))
}
