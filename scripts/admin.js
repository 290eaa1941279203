import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// `npm run admin -- <command>`: the operator's side of deletion requests, the same functions as
// /admin/deletion-requests. On the embedded database, stop the server first (one process at a time).
//   npm run admin -- list
//   npm run admin -- process <request-id> [--as <admin id>]
//   npm run admin -- withdraw <request-id> [--as <admin id>]   (the user asked to keep their account)
//   npm run admin -- history <request-id>

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
process.chdir(projectRoot)
const [command, ...args] = process.argv.slice(2)
const usage =
	'usage: npm run admin -- list | process <request-id> [--as <admin id>] | withdraw <request-id> [--as <admin id>] | history <request-id>'
if (!['list', 'process', 'withdraw', 'history'].includes(command)) {
	console.error(usage)
	process.exit(2)
}

const build = await import(path.join(projectRoot, 'build/server/index.js'))
const entry = build.entry.module
try {
	const { database } = await entry.startServices({ projectRoot, quiet: true })
	// Which database was read: without DATABASE_URL (or with one of another scheme) it is the embedded
	// one in ./data/pglite, made empty if it was not there, where "No pending deletion requests" would
	// mislead. On stderr, so that what the commands print stays theirs.
	console.error(`database: ${database}`)
} catch (error) {
	console.error(`Cannot open the database: ${error.message}`)
	process.exit(1)
}
const admin = entry.adminCommands
let exitCode = 0
try {
	if (command === 'list') {
		const pending = await admin.listPendingDeletionRequests()
		if (pending.length === 0) console.log('No pending deletion requests.')
		for (const row of pending) {
			const sub = row.subscription
			console.log(
				`${row.requestId}  filed ${row.submittedAt.toISOString()}  user ${row.clerkId}  ` +
					`subscription ${sub.plan}/${sub.status}  customer ${sub.processor_customer_id ?? '-'}`,
			)
		}
	} else if (command === 'process' || command === 'withdraw') {
		const [requestId] = args
		const asIndex = args.indexOf('--as')
		const actor = asIndex >= 0 ? args[asIndex + 1] : `cli:${os.userInfo().username}`
		if (!requestId || !actor) throw Object.assign(new Error(usage), { usage: true })
		if (command === 'process') {
			const result = await admin.markDeletionRequestProcessed(requestId, actor)
			if (result.status === 'ok') console.log(`Processed ${requestId} as ${actor} at ${result.processedAt.toISOString()}.`)
			else {
				console.error(`Not processed: ${result.code}`)
				exitCode = 1
			}
		} else {
			const result = await admin.withdrawDeletionRequest(requestId, actor)
			if (result.status === 'ok') console.log(`Withdrew ${requestId} (user ${result.clerkId}) as ${actor}; nothing was deleted.`)
			else {
				console.error(`Not withdrawn: ${result.code === 'not-pending' ? `already ${result.current}` : result.code}`)
				exitCode = 1
			}
		}
	} else {
		const [requestId] = args
		if (!requestId) throw Object.assign(new Error(usage), { usage: true })
		const events = await admin.deletionRequestHistory(requestId)
		// Every request has its filing at least: none means there is no such request (as process says it).
		if (events.length === 0) {
			console.error(`No history: not-found (no deletion request ${requestId})`)
			exitCode = 1
		}
		for (const event of events) {
			console.log(`${event.at.toISOString()}  ${event.action}  by ${event.actor}`)
		}
	}
} catch (error) {
	console.error(error.usage ? error.message : `Failed: ${error.message}`)
	exitCode = error.usage ? 2 : 1
} finally {
	await entry.stopServices()
}
process.exit(exitCode)
