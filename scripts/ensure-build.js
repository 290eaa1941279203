import { execSync } from 'node:child_process'
import { sourcesNewerThanBuild } from './build-freshness.js'

// `npm start` on a fresh clone has no build yet, and after a `git pull` an old one: build, so the
// quick start stays two commands and an update is served as soon as the server restarts.
const newer = sourcesNewerThanBuild(process.cwd())
if (newer === null || newer.length > 0) {
	const why = newer === null ? 'No build found' : `The build is older than ${newer.length} source file(s) (${newer.slice(0, 3).join(', ')})`
	console.log(`${why}: building (npm run build)…`)
	execSync('npm run build', { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } })
}
