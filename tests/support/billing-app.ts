import { afterAll, beforeAll, expect } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from './app-server.ts'
import type { PrismaClient } from '../../app/generated/prisma/client.ts'
import { freshDatabaseUrl, readStored } from './database.ts'
import { until } from './deadline.ts'
import { postJson } from './http.ts'
import { newClerkUserId, sessionHeaders } from './sessions.ts'

// The billing test files each run one app against their own stand-ins, with these helpers. The app,
// the stand-ins and the app's environment are live bindings, set once the file's beforeAll has run.
export let standIns: StandIns
export let app: RunningApp
export let appEnv: Record<string, string>

/** Starts the file's app (webhooks pointed at it) before its tests and stops it after. */
export function serveBillingApp() {
	beforeAll(async () => {
		standIns = await startStandIns()
		appEnv = { DATABASE_URL: await freshDatabaseUrl(), ...standIns.env }
		app = await startApp(appEnv)
		standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
	})
	afterAll(async () => {
		await app?.stop()
		await standIns?.close()
	})
}

/**
 * Reads (or changes) the database beside the app. On the embedded database the app restarts on a new
 * port: the live binding and the processor's webhook address follow it.
 */
export async function stored<T>(work: (prisma: PrismaClient) => Promise<T>): Promise<T> {
	const read = await readStored(app, appEnv, work)
	app = read.app
	standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
	return read.value
}

export const auth = (userId: string) => sessionHeaders(standIns.clerk, userId)
export const status = async (userId: string) => (await fetch(`${app.url}/api/billing/status`, { headers: auth(userId) })).json()
export const checkout = (userId: string, body: unknown) => postJson(`${app.url}/api/billing/checkout`, body, auth(userId))
export const sessionIdOf = (url: string) => url.split('/').pop()!

/** Pays for the user's checkout the way the hosted page would: the processor then sends its events. */
export async function pay(sessionUrl: string) {
	const response = await fetch(`${standIns.stripe.url}/checkout/${sessionIdOf(sessionUrl)}/pay`, { method: 'POST', redirect: 'manual' })
	expect(response.status).toBe(303)
	return response.headers.get('location')!
}

export async function subscribedUser(plan = 'team', interval = 'month') {
	const userId = newClerkUserId()
	const { url } = await (await checkout(userId, { plan, interval })).json()
	await pay(url)
	const params = standIns.stripe.checkoutParams(sessionIdOf(url))!
	return { userId, customer: String(params.customer), state: await status(userId) }
}

/**
 * Delivers the event while the fake processor answers late, and resolves once the app's call to
 * `path` has arrived there (its answer is then fixed: the state at arrival). Awaiting the returned
 * `delivery` gives the app's answer.
 */
export async function deliverSlowly(
	type: Parameters<StandIns['stripe']['makeEvent']>[0],
	subscription: Record<string, unknown>,
	path: string,
) {
	const seen = standIns.stripe.requests.length
	standIns.stripe.setLatency(1_500)
	const delivery = standIns.stripe.deliver(standIns.stripe.makeEvent(type, subscription as never))
	try {
		await until(() => standIns.stripe.requests.slice(seen).some((r) => r.path === path), 5_000, `the slow call to ${path}`)
	} finally {
		standIns.stripe.setLatency(0)
	}
	return { delivery, seen }
}

/** The hosted-checkout URLs of checkouts the user opens at once, one per plan (as in two tabs). */
export async function openCheckouts(userId: string, plans: readonly string[] = ['solo', 'team']): Promise<string[]> {
	return Promise.all(plans.map(async (plan) => (await (await checkout(userId, { plan })).json()).url as string))
}

/** Two checkouts opened together (both with the trial); the first paid and delivered, the second paid a minute later, not yet delivered. */
export async function twoTrialsSecondPending() {
	const userId = newClerkUserId()
	const urls = await openCheckouts(userId)
	const a = standIns.stripe.store.completeCheckout(sessionIdOf(urls[0]!)).subscription
	expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', a))).status).toBe(200)
	const b = standIns.stripe.store.completeCheckout(sessionIdOf(urls[1]!)).subscription
	b.created = Number(a.created) + 60
	return { userId, a, b }
}

/** A team trial, then a studio subscription a minute newer, both live and delivered. */
export async function userPayingTwice() {
	const { userId, customer } = await subscribedUser('team')
	const older = standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!
	const newer = standIns.stripe.createSubscription({ customer, plan: 'studio', status: 'active' })
	newer.created = Number(older.created) + 60
	expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', newer))).status).toBe(200)
	return { userId, older, newer }
}

/** The plan of a subscription at the fake processor, from its price's lookup key (`team_month`). */
export function planOf(subscription: Record<string, unknown>) {
	return (subscription.items as { data: { price: { lookup_key: string } }[] }).data[0]!.price.lookup_key.split('_')[0]
}

export function subscriptionIdFor(customer: string) {
	const sub = standIns.stripe.store.all('subscription').find((s) => s.customer === customer)
	return String(sub!.id)
}
