import { spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl, readStored } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { postForm, postJson } from '../support/http.ts'
import { projectRoot } from '../support/project.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'

let standIns: StandIns
let app: RunningApp
let databaseUrl: string
let appEnv: Record<string, string>
const adminId = newClerkUserId()

beforeAll(async () => {
	standIns = await startStandIns()
	databaseUrl = await freshDatabaseUrl()
	appEnv = { DATABASE_URL: databaseUrl, ADMIN_USER_IDS: `user_other, ${adminId}`, ...standIns.env }
	app = await startApp(appEnv)
	standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
})
afterAll(async () => {
	await app?.stop()
	await standIns?.close()
})

const auth = (userId: string) => sessionHeaders(standIns.clerk, userId)
// A request's heading as the page writes it: the id on a line of its own.
const listed = (userId: string) => `Request from <span class="request-id">${userId}</span>`
const adminPage = (userId?: string) => fetch(`${app.url}/admin/deletion-requests`, { headers: userId ? auth(userId) : {} })
const markProcessed = (requestId: string, userId = adminId, confirmed = 'yes') =>
	postForm(`${app.url}/admin/deletion-requests`, { intent: 'mark-processed', requestId, confirmed }, { ...auth(userId), Origin: app.url })

const withdraw = (requestId: string, userId = adminId, userAsked = 'yes') =>
	postForm(`${app.url}/admin/deletion-requests`, { intent: 'withdraw', requestId, userAsked }, { ...auth(userId), Origin: app.url })

async function userWithRequest({ subscribe }: { subscribe: boolean }) {
	const userId = newClerkUserId()
	standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
	let subscriptionId: string | undefined
	if (subscribe) {
		const { url } = await (await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))).json()
		const sessionId = url.split('/').pop()
		await fetch(`${standIns.stripe.url}/checkout/${sessionId}/pay`, { method: 'POST', redirect: 'manual' })
		const customer = standIns.stripe.checkoutParams(sessionId)!.customer
		subscriptionId = String(standIns.stripe.store.all('subscription').find((s) => s.customer === customer)!.id)
	}
	const filed = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
	const { request_id } = await filed.json()
	return { userId, requestId: request_id as string, subscriptionId }
}

describe('/admin/deletion-requests', () => {
	test('is a 404 for visitors and for signed-in users who are not administrators, who change nothing', async () => {
		expect((await adminPage()).status).toBe(404)
		expect((await adminPage(newClerkUserId())).status).toBe(404)
		// A real pending request, so that a 404 cannot come from "no such request" instead: the request's
		// own user, and another signed-in user, post both of the page's forms.
		const { userId, requestId } = await userWithRequest({ subscribe: false })
		for (const someone of [userId, newClerkUserId()]) {
			expect((await markProcessed(requestId, someone)).status).toBe(404)
			expect((await withdraw(requestId, someone)).status).toBe(404)
		}
		// Still pending: filing again gets the same request, and the administrator still sees it.
		const again = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
		expect((await again.json()).request_id).toBe(requestId)
		expect(await (await adminPage(adminId)).text()).toContain(listed(userId))
	})

	test("an outcome's address names a request that was not so closed: the page claims nothing", async () => {
		const { userId, requestId } = await userWithRequest({ subscribe: false })
		for (const outcome of [`processed=${requestId}`, `withdrawn=${requestId}`]) {
			const html = await (await fetch(`${app.url}/admin/deletion-requests?${outcome}`, { headers: auth(adminId) })).text()
			expect(html, outcome).not.toContain(`Marked the request from ${userId}`)
			expect(html, outcome).not.toContain(`Withdrew the request from ${userId}`)
			expect(html, outcome).toContain(listed(userId))
		}
	})

	test('a user who changed their mind has the request withdrawn at their word: nothing is deleted, and they can subscribe and file again', async () => {
		const { userId, requestId } = await userWithRequest({ subscribe: false })
		const checkout = () => postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))
		expect((await checkout()).status).toBe(409)
		// The page shows the reference the user was told to quote.
		expect(await (await adminPage(adminId)).text()).toMatch(new RegExp(`<dt>Reference</dt><dd>${requestId}</dd>`))

		const unconfirmed = await withdraw(requestId, adminId, '')
		expect(unconfirmed.status).toBe(400)
		// Said beside the box it is about, inside the withdrawal's disclosure, which stays open.
		const refusedPage = await unconfirmed.text()
		expect(refusedPage).toContain(`Nothing was withdrawn for the request from ${userId}`)
		expect(refusedPage).toMatch(/<details open="">\s*<summary>The user changed their mind\?<\/summary>/)
		expect(refusedPage).toContain(`<p class="field__error" id="userAsked-${requestId}-error">Tick this if the user asked.</p>`)
		const done = await withdraw(requestId)
		expect(done.status).toBe(303)
		expect(done.headers.get('location')).toBe(`/admin/deletion-requests?withdrawn=${requestId}`)
		const outcome = await (await fetch(`${app.url}${done.headers.get('location')}`, { headers: auth(adminId) })).text()
		expect(outcome).toMatch(new RegExp(`autofocus=""[^>]*>Withdrew the request from ${userId}\\. Nothing was deleted`))
		expect(outcome).not.toContain(listed(userId))
		// Closed for good: neither withdrawn again nor processed.
		const twice = await withdraw(requestId)
		expect(twice.status).toBe(409)
		expect(await twice.text()).toContain('is no longer pending: it was already withdrawn.')
		const processed = await markProcessed(requestId)
		expect(processed.status).toBe(409)
		expect(await processed.text()).toContain('was withdrawn: there is nothing to process.')

		// The user's account is as before: plans can be started, and a new filing is a new request.
		expect((await checkout()).status).toBe(200)
		const account = await (await fetch(`${app.url}/account`, { headers: auth(userId) })).text()
		expect(account).toContain('Request account deletion')
		const again = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
		expect((await again.json()).request_id).not.toBe(requestId)

		const read = await readStored(app, appEnv, (prisma) =>
			prisma.deletionRequest.findUniqueOrThrow({ where: { id: requestId }, include: { events: { orderBy: { at: 'asc' } } } }),
		)
		app = read.app
		standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
		expect(read.value).toMatchObject({ status: 'withdrawn', processedAt: null, processedBy: null })
		expect(read.value.events.map((e) => [e.action, e.actor])).toEqual([
			['filed', userId],
			['withdrawn', adminId],
		])
	})

	test('marking needs the administrator to confirm the deletion was done; unconfirmed, nothing changes', async () => {
		const { userId, requestId } = await userWithRequest({ subscribe: false })
		const refused = await markProcessed(requestId, adminId, '')
		expect(refused.status).toBe(400)
		// The notice says whose request; that request's box is marked and described by what to do.
		const html = await refused.text()
		expect(html).toContain(
			`Nothing was marked for the request from ${userId}: tick &quot;I have deleted this account and its data&quot; first.`,
		)
		const errorId = `confirmed-${requestId}-error`
		expect(html).toMatch(new RegExp(`name="confirmed" required="" aria-invalid="true" aria-describedby="${errorId}"`))
		expect(html).toContain(`<p class="field__error" id="${errorId}">Tick this once the account and its data are deleted.</p>`)
		// Said in that request's card, above its box, and nowhere else: at the top of the list it sat above
		// another request's box of the same name.
		expect(html.match(/role="alert"/g)).toHaveLength(1)
		expect(html.slice(html.indexOf(listed(userId)), html.indexOf(`aria-describedby="${errorId}"`))).toContain('role="alert"')
		expect(html).not.toContain('aria-describedby="userAsked-')
		const page = await (await adminPage(adminId)).text()
		expect(page).toContain(listed(userId))
		expect((await markProcessed(requestId)).status).toBe(303)
		expect(await (await adminPage(adminId)).text()).not.toContain(listed(userId))
	})

	test('a form that is not one of the page’s two is refused, and a box sent with another value is unticked', async () => {
		const { userId, requestId } = await userWithRequest({ subscribe: false })
		for (const intent of ['delete-everything', '']) {
			const refused = await postForm(
				`${app.url}/admin/deletion-requests`,
				{ intent, requestId, confirmed: 'yes' },
				{ ...auth(adminId), Origin: app.url },
			)
			expect(refused.status).toBe(400)
			expect(await refused.text()).toContain('This page was out of date. Reload it and try again.')
		}
		const edited = await markProcessed(requestId, adminId, 'on')
		expect(edited.status).toBe(400)
		expect(await edited.text()).toContain(`Nothing was marked for the request from ${userId}`)
		const madeUp = await markProcessed('not-a-request')
		expect(madeUp.status).toBe(404)
		expect(await madeUp.text()).toContain('That request does not exist.')
		// Nothing of that changed the request.
		expect(await (await adminPage(adminId)).text()).toContain(listed(userId))
	})

	test('lists pending requests oldest first, with subscription state and customer id', async () => {
		const first = await userWithRequest({ subscribe: false })
		const second = await userWithRequest({ subscribe: true })
		const response = await adminPage(adminId)
		expect(response.status).toBe(200)
		const html = await response.text()
		expect(html.indexOf(first.userId)).toBeGreaterThan(-1)
		expect(html.indexOf(first.userId)).toBeLessThan(html.indexOf(second.userId))
		expect(html).toMatch(/Team · Free trial/)
		// Each request is a section headed by whose it is.
		expect(html).toContain(`<h2 id="request-${first.requestId}" class="request-title">${listed(first.userId)}</h2>`)
		expect(html).toMatch(/cus_/)
		// The subscriber's own page says the request waits for billing to settle, and offers no plans.
		const account = await (await fetch(`${app.url}/account`, { headers: auth(second.userId) })).text()
		expect(account).toContain('A person on our team will process it once your billing has settled')
		expect(account).not.toContain('See plans')
	})

	test('processing is refused while subscribed and allowed after cancellation, with an audit trail', async () => {
		const { userId, requestId, subscriptionId } = await userWithRequest({ subscribe: true })
		const refused = await markProcessed(requestId)
		expect(refused.status).toBe(409)
		// The refusal names whose request it was, and is focused without JavaScript.
		expect(await refused.text()).toMatch(
			new RegExp(
				`autofocus=""[^>]*>Refused: the request from ${userId} cannot be processed while they still have an active, trialing, past-due or incomplete subscription at Stripe`,
			),
		)

		const canceled = standIns.stripe.setSubscriptionStatus(subscriptionId!, 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
		// Post/Redirect/Get: the outcome is a page of its own (reloading it posts nothing), naming the request.
		const markedFrom = Date.now()
		const done = await markProcessed(requestId)
		const markedBy = Date.now()
		expect(done.status).toBe(303)
		expect(done.headers.get('location')).toBe(`/admin/deletion-requests?processed=${requestId}`)
		const outcome = await (await fetch(`${app.url}${done.headers.get('location')}`, { headers: auth(adminId) })).text()
		expect(outcome).toMatch(new RegExp(`autofocus=""[^>]*>Marked the request from ${userId} processed.`))
		expect((await markProcessed(requestId)).status).toBe(409)

		// Filing again after processing is a new pending request, not the processed one.
		const again = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
		expect(again.status).toBe(200)
		expect((await again.json()).request_id).not.toBe(requestId)

		const read = await readStored(app, appEnv, (prisma) =>
			prisma.deletionRequest.findUniqueOrThrow({ where: { id: requestId }, include: { events: { orderBy: { at: 'asc' } } } }),
		)
		app = read.app
		standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
		const stored = read.value
		expect(stored).toMatchObject({ status: 'processed', processedBy: adminId })
		// When: while the admin's post was on its way (one machine, one clock), and the audit entry's time.
		expect(stored.processedAt!.getTime()).toBeGreaterThanOrEqual(markedFrom - 1)
		expect(stored.processedAt!.getTime()).toBeLessThanOrEqual(markedBy + 1)
		expect(stored.events.at(-1)!.at).toEqual(stored.processedAt)
		expect(stored.events.map((e) => [e.action, e.actor])).toEqual([
			['filed', userId],
			['process-refused-subscribed', adminId],
			['processed', adminId],
		])
	})
})

describe('a filing on its way while its request is withdrawn', () => {
	// The filing read the pending request, then waited on the identity provider; meanwhile an administrator
	// withdrew it. Its new reason went nowhere (the update matched no pending row) and it answered
	// saved: true with the withdrawn request's id.
	test.each([
		['with a new reason', 'Filed again, with a reason'],
		['without a reason', undefined],
	])('%s is a new pending request, not the withdrawn one', async (_label, reason) => {
		const { userId, requestId } = await userWithRequest({ subscribe: false })
		// Another primary address: this filing takes the path that asks the identity provider.
		standIns.clerkApi.setUser({ id: userId, email: `new.${userId}@example.com` })
		standIns.clerkApi.setLatency(1_500)
		try {
			const asked = standIns.clerkApi.requests.length
			const filing = postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `new.${userId}@example.com`, reason }, auth(userId))
			await until(() => standIns.clerkApi.requests.length > asked, 5_000, 'the filing to ask the identity provider')
			standIns.clerkApi.setLatency(0)
			expect((await withdraw(requestId)).status).toBe(303)
			const answer = await filing
			expect(answer.status).toBe(200)
			const body = await answer.json()
			expect(body).toMatchObject({ ok: true, saved: true })
			expect(body.request_id).not.toBe(requestId)
			const read = await readStored(app, appEnv, (prisma) =>
				prisma.deletionRequest.findMany({ where: { user: { clerkId: userId } }, orderBy: { submittedAt: 'asc' } }),
			)
			app = read.app
			standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
			expect(read.value.map(({ id, status, reason }) => ({ id, status, reason }))).toEqual([
				{ id: requestId, status: 'withdrawn', reason: null },
				{ id: body.request_id, status: 'pending', reason: reason ?? null },
			])
		} finally {
			standIns.clerkApi.setLatency(0)
		}
	})
})

describe('/admin/deletion-requests asks the processor, not only what was stored', () => {
	test('a subscription paid at the processor whose webhook has not arrived refuses processing', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
		// A checkout opened before filing (decision 0020 lets it be paid), paid with no delivery to the app.
		const { url } = await (await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))).json()
		const filed = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
		const { request_id: requestId } = await filed.json()
		const { subscription } = standIns.stripe.store.completeCheckout(url.split('/').pop())
		// The app has not heard of it: its own state says free.
		const status = await (await fetch(`${app.url}/api/billing/status`, { headers: auth(userId) })).json()
		expect(status).toMatchObject({ has_subscription: false })

		const refused = await markProcessed(requestId)
		expect(refused.status).toBe(409)
		expect(await refused.text()).toContain(`Refused: the request from ${userId} cannot be processed`)
		// An incomplete one too: its first payment may still go through.
		standIns.stripe.setSubscriptionStatus(String(subscription.id), 'incomplete')
		expect((await markProcessed(requestId)).status).toBe(409)
		standIns.stripe.setSubscriptionStatus(String(subscription.id), 'canceled')
		expect((await markProcessed(requestId)).status).toBe(303)
	})

	test('a checkout opened before the filing can no longer be paid once the request is processed: no subscription bills the deleted account', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
		const { url } = await (await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))).json()
		const sessionId = url.split('/').pop()
		const filed = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
		const { request_id: requestId } = await filed.json()
		// Another customer's open checkout is not this request's to end.
		const other = newClerkUserId()
		const { url: otherUrl } = await (await postJson(`${app.url}/api/billing/checkout`, { plan: 'solo' }, auth(other))).json()

		expect((await markProcessed(requestId)).status).toBe(303)
		// The hosted page left open in a tab, paid after the deletion was done: the processor refuses it.
		const paid = await fetch(`${standIns.stripe.url}/checkout/${sessionId}/pay`, { method: 'POST', redirect: 'manual' })
		expect(paid.status).toBe(410)
		const customer = standIns.stripe.checkoutParams(sessionId)!.customer
		expect(standIns.stripe.store.all('subscription').filter((s) => s.customer === customer)).toEqual([])
		expect((await (await fetch(`${app.url}/api/billing/status`, { headers: auth(userId) })).json()).has_subscription).toBe(false)
		expect(standIns.stripe.store.get(otherUrl.split('/').pop(), 'checkout.session')?.status).toBe('open')
	})

	test('when the open checkouts cannot be ended, nothing is marked and the page says to try again', async () => {
		expectServerLog(/^account-deletion: could not end the open checkouts of cus_\S+ at the processor: /)
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
		const { url } = await (await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, auth(userId))).json()
		const filed = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
		const { request_id: requestId } = await filed.json()
		standIns.stripe.failNext(/^POST \/v1\/checkout\/sessions\/[^/]+\/expire$/, 2)
		const unverified = await markProcessed(requestId)
		expect(unverified.status).toBe(503)
		expect(await unverified.text()).toContain('Nothing was marked')
		expect(standIns.stripe.store.get(url.split('/').pop(), 'checkout.session')?.status).toBe('open')
		expect(await (await adminPage(adminId)).text()).toContain(listed(userId))
		expect((await markProcessed(requestId)).status).toBe(303)
		expect(standIns.stripe.store.get(url.split('/').pop(), 'checkout.session')?.status).toBe('expired')
	})

	test('when the processor cannot be asked, nothing is marked and the page says to try again', async () => {
		expectServerLog(/^account-deletion: could not read the subscriptions of cus_\S+ from the processor: /)
		const { userId, requestId, subscriptionId } = await userWithRequest({ subscribe: true })
		const canceled = standIns.stripe.setSubscriptionStatus(subscriptionId!, 'canceled')
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
		standIns.stripe.failNext(/^GET \/v1\/subscriptions$/, 2)
		const unverified = await markProcessed(requestId)
		expect(unverified.status).toBe(503)
		expect(await unverified.text()).toContain(
			`Nothing was marked: Stripe could not be asked whether it still bills ${userId}. Try again in a moment.`,
		)
		expect(await (await adminPage(adminId)).text()).toContain(listed(userId))
		expect((await markProcessed(requestId)).status).toBe(303)
	})
})

describe('npm run admin', () => {
	const admin = (...args: string[]) =>
		spawnSync(process.execPath, ['scripts/admin.js', ...args], {
			cwd: projectRoot,
			env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', DATABASE_URL: databaseUrl },
			encoding: 'utf8',
			timeout: 60_000,
		})

	test('lists, processes and withdraws requests from the command line, keeping the history', async () => {
		const { requestId } = await userWithRequest({ subscribe: false })
		const { requestId: second } = await userWithRequest({ subscribe: false })
		if (inject('databaseKind') === 'embedded') {
			// One process at a time on the embedded database: the CLI says so while the server runs.
			const refused = admin('list')
			expect(refused.status).toBe(1)
			expect(refused.stderr).toMatch(/already in use by process \d+/)
			await app.stop()
		}
		try {
			const list = admin('list')
			expect(list.status).toBe(0)
			expect(list.stdout).toContain(requestId)
			// Which database it read, on stderr (an unset DATABASE_URL would be an empty embedded one).
			expect(list.stderr).toMatch(inject('databaseKind') === 'embedded' ? /^database: embedded \(PGlite\) in /m : /^database: PostgreSQL /m)
			expect(list.stdout).not.toContain('database:')
			const processed = admin('process', requestId, '--as', 'ops@example.com')
			expect(processed.stdout + processed.stderr).toContain(`Processed ${requestId} as ops@example.com`)
			expect(processed.status).toBe(0)
			const history = admin('history', requestId)
			expect(history.stdout).toMatch(/filed[\s\S]*processed\s+by ops@example.com/)
			expect(history.status).toBe(0)
			// A request that does not exist is said to be so, as process says it, not an empty success.
			const unknown = admin('history', '00000000-0000-4000-8000-000000000000')
			expect(unknown.stderr).toContain('No history: not-found')
			expect(unknown.status).toBe(1)
			// Nor is an id that is not one an error of the database's; no id at all is the usage line.
			const malformed = admin('history', 'abc')
			expect(malformed.stderr).toContain('No history: not-found (no deletion request abc)')
			expect(malformed.status).toBe(1)
			const missing = admin('history')
			expect(missing.stderr).toMatch(/^usage: npm run admin -- list/m)
			expect(missing.status).toBe(2)
			// A request the user takes back is withdrawn, once.
			const withdrawn = admin('withdraw', second, '--as', 'ops@example.com')
			expect(withdrawn.stdout + withdrawn.stderr).toContain(`Withdrew ${second}`)
			expect(withdrawn.status).toBe(0)
			const again = admin('withdraw', second)
			expect(again.stderr).toContain('Not withdrawn: already withdrawn')
			expect(again.status).toBe(1)
			expect(admin('nonsense').status).toBe(2)
		} finally {
			// The server serves the tests after this one, passing or not.
			if (app.process.exitCode !== null) app = await startApp(appEnv)
		}
		// Ten processes that each open the database, and on the embedded one a server stopped and
		// started again: 36–45 s on this machine, too near the 60 s default to pass on a slower one.
	}, 180_000)
})
