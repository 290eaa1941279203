import path from 'node:path'
import { fileURLToPath } from 'node:url'

// `npm run billing:sync`: creates or updates the Stripe products, prices (lookup keys
// `<plan>_<interval>`) and customer-portal configuration from the plan table. Safe to run again:
// what already matches is left alone. Uses STRIPE_SECRET_KEY (and STRIPE_API_URL, APP_URL).

const usage = `usage: npm run billing:sync
  Creates or updates the Stripe products, prices and customer portal from the plan table
  (app/modules/billing/plans.ts), with STRIPE_SECRET_KEY. Safe to repeat. Set APP_URL to the public
  URL first: the customer portal sends customers back to APP_URL/account.`
const args = process.argv.slice(2)
if (args.length > 0) {
	// No options: anything given is a mistake, and must not be taken as "go ahead" with a live key.
	const help = args.length === 1 && ['--help', '-h'].includes(args[0])
	;(help ? console.log : console.error)(usage)
	process.exit(help ? 0 : 2)
}

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
// The portal configuration keeps APP_URL/account as its return address: a live account must not send
// customers to the localhost default.
if (!process.env.APP_URL?.trim()) {
	if (entry.secretKeyMode() === 'live') {
		console.error(
			`APP_URL is not set: the live customer portal would send customers back to ${config.APP_URL}/account. Set APP_URL to the public URL.`,
		)
		process.exit(1)
	}
	console.warn(`warning: APP_URL is not set: the customer portal will send customers back to ${config.APP_URL}/account.`)
}
console.log(`Customer portal returns to ${config.APP_URL}/account`)
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
