import path from 'node:path'
import { fileURLToPath } from 'node:url'

// `npm run billing:sync`: creates or updates the Stripe products, prices (lookup keys
// `<plan>_<interval>`) and customer-portal configuration from the plan table. Safe to run again:
// what already matches is left alone. Uses STRIPE_SECRET_KEY (and STRIPE_API_URL, APP_URL).

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
process.chdir(projectRoot)
const build = await import(path.join(projectRoot, 'build/server/index.js'))
const entry = build.entry.module

let config
try {
	config = entry.initEnv()
} catch (error) {
	console.error(error.message)
	process.exit(1)
}
if (!config.STRIPE_SECRET_KEY) {
	console.error('STRIPE_SECRET_KEY is not set: nothing to sync.')
	process.exit(1)
}
// Not a visitor's request: wait longer and retry more than the web paths do (every write is idempotent).
const stripe = entry.createStripeClient(config.STRIPE_SECRET_KEY, config.STRIPE_API_URL, { timeout: 30_000, maxNetworkRetries: 3 })
try {
	const report = await entry.syncBillingCatalog(stripe, config.APP_URL)
	for (const item of report.created) console.log(`created    ${item}`)
	for (const item of report.updated) console.log(`updated    ${item}`)
	console.log(`${report.created.length} created, ${report.updated.length} updated, ${report.unchanged.length} unchanged`)
} catch (error) {
	console.error(`billing:sync failed: ${error.message}`)
	process.exit(1)
}
// The SDK's keep-alive sockets would hold the process open.
process.exit(0)
