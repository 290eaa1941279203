import fs from 'node:fs'
import path from 'node:path'
import { projectRoot } from './project.ts'

export type StartCommand = { env: Record<string, string>; nodeArgs: string[]; script: string }

/**
 * How `npm start` runs the server, read from package.json's start script, so that tests, journeys
 * and the benchmark run the process operators run: its last command is
 * `exec env [NAME=value …] node [--flag …] server/start.js` (`exec`: the shell npm starts becomes the
 * server, so the SIGTERM npm passes on reaches it; `env` sets the variables for it).
 */
export function productionStart(): StartCommand {
	const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }
	const last = pkg.scripts.start.split('&&').at(-1)!.trim()
	const match = last.match(/^exec\s+env\s+((?:\w+=\S+\s+)*)node\s+((?:--\S+\s+)*)(\S+\.js)$/)
	if (!match) throw new Error(`package.json start script does not end in "exec env [NAME=value …] node [--flags] <file>.js": ${last}`)
	const env = Object.fromEntries(
		match[1]!
			.trim()
			.split(/\s+/)
			.filter(Boolean)
			.map((pair) => pair.split('=') as [string, string]),
	)
	return { env, nodeArgs: match[2]!.trim().split(/\s+/).filter(Boolean), script: match[3]! }
}
