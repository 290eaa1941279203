import { execSync } from 'node:child_process'
import fs from 'node:fs'

// `npm start` on a fresh clone has no build yet: make one, so the quick start stays two commands.
if (!fs.existsSync('build/server/index.js')) {
	console.log('No build found: building once (npm run build)…')
	execSync('npm run build', { stdio: 'inherit' })
}
