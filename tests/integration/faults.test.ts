import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import pg from 'pg'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl, withDatabase } from '../support/database.ts'
import { until, within } from '../support/deadline.ts'
import { postForm, postJson } from '../support/http.ts'
import { runPrismaMigrateDeploy } from '../../app/utils/db/migrate.server.ts'
import { createDatabase, startTestPostgres, type TestPostgres } from '../support/postgres.ts'
import { projectRoot } from '../support/project.ts'
import { FREE_STATUS } from '../support/status-payloads.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

// The database server dies and comes back while the app keeps running: the app answers the contract's
// errors (or the status fallback) meanwhile, recovers without a restart, and loses nothing it accepted.
// PostgreSQL only, on a cluster of its own so other test files are not disturbed.
describe.runIf(inject('databaseKind') === 'postgres')('PostgreSQL stopped and restarted under the app', () => {
	let postgres: TestPostgres
	let standIns: StandIns
	let app: RunningApp
	let databaseUrl: string

	beforeAll(async () => {
		postgres = await startTestPostgres({ durable: true })
		await createDatabase(postgres.adminUrl, 'faults')
		databaseUrl = postgres.url('faults')
		await runPrismaMigrateDeploy({ projectRoot, query: async () => ({ rows: [] }), databaseUrl })
		standIns = await startStandIns()
		app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env })
	})
	afterAll(async () => {
		await app?.stop()
		await standIns?.close()
		await postgres?.stop()
	})

	function newUser() {
		const id = newClerkUserId()
		standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
		return id
	}
	const file = (id: string) =>
		postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${id}@example.com` }, sessionHeaders(standIns.clerk, id))

	test('answers with contract errors while down, recovers without a restart, and loses nothing accepted', async () => {
		expectServerLog(
			/^database: idle connection error: /,
			/^database: the connection for per-request statements failed: /,
			/^(GET|POST) \/api\/\S+ failed: Error: /,
			/^account-deletion: storing the request of user \S+ failed: /,
			/^account-deletion: the account page could not read the account: /,
			/^account: the page could not read the account of \S+: /,
			/^billing: the pricing page could not read the pending deletion request of \S+: /,
			/^billing: the page could not read the account: /,
			/^billing: status for \S+ fell back to free\/none: /,
			/^rate limits: PostgreSQL did not count \d+ request\(s\) since the last note/,
		)
		const users = Array.from({ length: 60 }, newUser)
		const subscriber = newUser()
		expect((await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, sessionHeaders(standIns.clerk, subscriber))).status).toBe(
			200,
		)

		const accepted = new Set<string>()
		// Whether the database had been killed when each answer arrived.
		const answers: Array<{ ok: boolean; afterKill: boolean }> = []
		let killed = false
		const KILL_AT = 5
		let nthAccepted!: () => void
		const enoughAccepted = new Promise<void>((resolve) => (nthAccepted = resolve))
		const record = async (id: string) => {
			const response = await file(id)
			const body = await response.json()
			answers.push({ ok: response.status === 200, afterKill: killed })
			if (response.status === 200) {
				expect(body.saved).toBe(true)
				accepted.add(body.request_id)
				if (accepted.size === KILL_AT) nthAccepted()
			} else {
				// The contract's errors that say nothing was stored and it is safe to retry.
				expect([500, 503]).toContain(response.status)
				expect(body.code).toMatch(/^(db-error|server-error|identity-provider-unavailable)$/)
			}
		}

		// A storm of filings by three clients in turn, with the database killed when the fifth has been
		// accepted: the others are in flight then, or sent while it is down.
		const queue = users.slice(0, 30)
		let next = 0
		const client = async () => {
			while (next < queue.length) await record(queue[next++]!)
		}
		const storm = Promise.all([client(), client(), client()]).then(() => {
			if (accepted.size < KILL_AT) throw new Error(`every filing was answered before ${KILL_AT} were accepted`)
		})
		await within(Promise.race([enoughAccepted, storm]), 30_000, `${KILL_AT} accepted filings`)
		postgres.kill()
		killed = true
		await within(storm, 60_000, 'answers to the filings sent while the database is down')
		expect(answers.filter((a) => a.ok && !a.afterKill).length).toBeGreaterThanOrEqual(1)
		expect(answers.filter((a) => !a.ok && a.afterKill).length).toBeGreaterThanOrEqual(1)

		// While it is down: the status fallback, and the contract's errors elsewhere.
		const status = await fetch(`${app.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, subscriber) })
		expect(status.status).toBe(200)
		expect(await status.json()).toEqual(FREE_STATUS)
		const down = await file(users[40]!)
		expect(down.status).toBe(500)
		expect(await down.json()).toMatchObject({ code: 'db-error' })
		// A body that could never succeed is the client's to fix, down or not: 400, never "retry".
		const badBodies = [
			['/api/account/delete-request', { reason: 'no confirmEmail' }],
			['/api/billing/checkout', { plan: 'platinum' }],
		] as const
		for (const [path, body] of badBodies) {
			const refused = await postJson(`${app.url}${path}`, body, sessionHeaders(standIns.clerk, users[41]!))
			expect(refused.status, path).toBe(400)
			expect(await refused.json(), path).toMatchObject({ code: 'bad-body' })
		}
		// The pages' forms answer as the API does, on the page: what was typed is kept, and the page says
		// that a retry is safe (the first read of the user threw to the generic error page).
		const filer = users[42]!
		const reason = 'Please keep this reason I typed'
		const form = await postForm(
			`${app.url}/account`,
			{ intent: 'delete-request', confirmEmail: `${filer}@example.com`, reason },
			{ ...sessionHeaders(standIns.clerk, filer), Origin: app.url },
		)
		expect(form.status).toBe(500)
		const formPage = await form.text()
		expect(formPage).toContain(
			'We could not confirm that your request was saved. Please try again in a moment: a request is never filed twice.',
		)
		expect(formPage).toContain(reason)
		// A form that could never be filed is the user's to fix, as the API's 400: never "try again".
		const emptyEmail = await postForm(
			`${app.url}/account`,
			{ intent: 'delete-request', confirmEmail: '', reason },
			{ ...sessionHeaders(standIns.clerk, filer), Origin: app.url },
		)
		expect(emptyEmail.status).toBe(400)
		const emptyEmailPage = await emptyEmail.text()
		expect(emptyEmailPage).toContain('Type the email address of your account.')
		expect(emptyEmailPage).not.toContain('Please try again in a moment')
		expect(emptyEmailPage).toContain(reason)
		const accountPage = await fetch(`${app.url}/account`, { headers: sessionHeaders(standIns.clerk, filer) })
		expect(accountPage.status).toBe(200)
		expect(await accountPage.text()).toContain('We could not load your plan and billing details just now.')
		const pricing = await postForm(
			`${app.url}/pricing`,
			{ intent: 'checkout', plan: 'team' },
			{ ...sessionHeaders(standIns.clerk, filer), Origin: app.url },
		)
		expect(pricing.status).toBe(500)
		expect(await pricing.text()).toContain('Nothing was charged: please try again in a moment.')
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
		// Contact needs the database only to count: it keeps working, counted in this instance's memory,
		// and the log says so once rather than per request.
		for (let i = 0; i < 3; i++) {
			const message = { name: 'Ada', email: 'ada@example.com', subject: `While the database is down ${i}`, message: 'Still there?' }
			expect((await postJson(`${app.url}/api/contact`, message)).status).toBe(200)
		}
		await until(() => /rate limits: PostgreSQL did not count/.test(app.output()), 5_000, 'the note on counting in memory')
		expect(app.output().match(/rate limits: PostgreSQL did not count \d+ request\(s\)/g)).toHaveLength(1)

		// It comes back; the app recovers by itself.
		await postgres.start()
		const deadline = Date.now() + 20_000
		let recovered = false
		while (!recovered && Date.now() < deadline) {
			const state = await (await fetch(`${app.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, subscriber) })).json()
			recovered = state.processor_customer_id !== null
			if (!recovered) await new Promise((r) => setTimeout(r, 250))
		}
		expect(recovered).toBe(true)
		await Promise.all(users.slice(30, 60).map(record))

		const stored = await withDatabase(databaseUrl, (prisma) => prisma.deletionRequest.findMany({ select: { id: true } }))
		const storedIds = new Set(stored.map((row) => row.id))
		for (const id of accepted) expect(storedIds.has(id)).toBe(true)
		expect(accepted.size).toBeGreaterThanOrEqual(30)
	})
})

/** An app whose PostgreSQL is reached through a proxy a test can freeze; `directUrl` goes around it. */
async function startAppBehindProxy() {
	const directUrl = await freshDatabaseUrl()
	const throughProxy = new URL(directUrl)
	const proxy = await startTcpProxy({ host: throughProxy.hostname, port: Number(throughProxy.port) })
	throughProxy.port = String(proxy.port)
	const standIns = await startStandIns()
	const app = await startApp({ DATABASE_URL: throughProxy.toString(), ...standIns.env })
	return { proxy, standIns, app, directUrl }
}

async function stopAll(app: RunningApp | undefined, standIns: StandIns | undefined, proxy: TcpProxy | undefined) {
	await app?.stop()
	await standIns?.close()
	await proxy?.close()
}

// The database stops answering without closing anything (a partitioned network, a frozen host): each
// request must still end, with the contract's fallback or "safe to retry" error, and not hold its
// client until the operating system gives up on the socket many minutes later.
describe.runIf(inject('databaseKind') === 'postgres')('PostgreSQL stops answering under the app', () => {
	let proxy: TcpProxy
	let standIns: StandIns
	let app: RunningApp

	beforeAll(async () => {
		;({ proxy, standIns, app } = await startAppBehindProxy())
	})
	afterAll(() => stopAll(app, standIns, proxy))

	test('requests end with the status fallback or a retryable error, and the app recovers when it answers again', async () => {
		expectServerLog(
			/^database: idle connection error: /,
			/^database: the connection for per-request statements failed: /,
			/^(GET|POST) \/api\/\S+ failed: Error: /,
			/^account-deletion: storing the request of user \S+ failed: /,
			/^account-deletion: the account page could not read the account: /,
			/^account: the page could not read the account of \S+: /,
			/^billing: the pricing page could not read the pending deletion request of \S+: /,
			/^billing: the page could not read the account: /,
			/^billing: status for \S+ fell back to free\/none: /,
		)
		const id = newClerkUserId()
		standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
		const headers = sessionHeaders(standIns.clerk, id)
		expect((await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, headers)).status).toBe(200)
		const status = async () => (await fetch(`${app.url}/api/billing/status`, { headers })).json()
		expect(await status()).toMatchObject({ processor_customer_id: expect.stringMatching(/^cus_/) })

		proxy.freeze()
		expect(await within(status(), 30_000, 'the status answer while the database hangs')).toEqual(FREE_STATUS)
		const filing = await within(
			postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${id}@example.com` }, headers),
			30_000,
			'the deletion request answer while the database hangs',
		)
		expect(filing.status).toBe(500)
		expect(await filing.json()).toMatchObject({ code: 'db-error' })
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)

		proxy.thaw()
		const deadline = Date.now() + 20_000
		let state = await status()
		while (state.processor_customer_id === null && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 250))
			state = await status()
		}
		expect(state.processor_customer_id).toMatch(/^cus_/)
		const retried = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${id}@example.com` }, headers)
		expect(retried.status).toBe(200)
		expect(await retried.json()).toMatchObject({ saved: true })
	})

	// Closing the connections waits for PostgreSQL's answer: the stop waited for as long as it did not
	// answer (minutes, until the operating system gave up), and a supervisor would kill it first.
	test('SIGTERM while PostgreSQL does not answer: the server stops within seconds, says why, and exits 1', async () => {
		expectServerLog(/^stopping: closing the services failed: PostgreSQL did not answer the close /)
		const id = newClerkUserId()
		expect((await fetch(`${app.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, id) })).status).toBe(200)
		proxy.freeze()
		const code = await within(app.stop(), 15_000, 'the stop while the database hangs')
		expect(code).toBe(1)
		expect(app.errorOutput()).toContain(
			'stopping: closing the services failed: PostgreSQL did not answer the close within 3 s; exiting without it',
		)
		expect(app.output()).not.toContain('stopped\n')
	})
})

// A billing webhook that arrives while the database stops answering: the answer must make the
// processor retry (nothing was stored), and its redelivery of the same event once the database answers
// again must store the subscription, once (contract.md §2 "Webhook").
describe.runIf(inject('databaseKind') === 'postgres')('A billing webhook while PostgreSQL stops answering', () => {
	let proxy: TcpProxy
	let standIns: StandIns
	let app: RunningApp
	let databaseUrl: string

	beforeAll(async () => {
		;({ proxy, standIns, app, directUrl: databaseUrl } = await startAppBehindProxy())
	})
	afterAll(() => stopAll(app, standIns, proxy))

	test('is answered 500 server-error and stores nothing; redelivered after recovery it is 200 and stored exactly once', async () => {
		expectServerLog(
			/^billing: webhook evt_\S+ \(customer\.subscription\.created\) failed; the processor will retry: /,
			/^database: idle connection error: /,
			/^database: the connection for per-request statements failed: /,
			/^billing: status for \S+ fell back to free\/none: /,
		)
		const clerkId = newClerkUserId()
		const headers = sessionHeaders(standIns.clerk, clerkId)
		const status = async () => (await fetch(`${app.url}/api/billing/status`, { headers })).json()
		const opened = await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, headers)
		expect(opened.status).toBe(200)
		// Paid at the processor; its event has not reached the app yet.
		const { url } = await opened.json()
		const { subscription } = standIns.stripe.store.completeCheckout(url.split('/').pop())
		const customer = String(subscription.customer)
		const lookupKey = (subscription.items as { data: { price: { lookup_key: string } }[] }).data[0]!.price.lookup_key
		expect({ plan: lookupKey.split('_')[0], status: subscription.status }).toEqual({ plan: 'team', status: 'trialing' })
		expect(await status()).toMatchObject({ plan: 'free', status: 'none', processor_customer_id: customer, has_subscription: false })

		// The processor's delivery: the same event (same id, same bytes), signed anew each time.
		const event = standIns.stripe.makeEvent('customer.subscription.created', subscription)
		const deliver = async () => {
			const { payload, header } = standIns.stripe.signEvent(event)
			const response = await fetch(`${app.url}/api/billing/webhook`, {
				method: 'POST',
				headers: { 'Content-Type': 'application/json', 'Stripe-Signature': header },
				body: payload,
			})
			return { status: response.status, body: await response.json() }
		}
		// What is stored, read beside the app (not through the proxy it reaches the database by).
		const stored = () =>
			withDatabase(databaseUrl, async (prisma) => ({
				events: await prisma.webhookEvent.count({ where: { id: event.id } }),
				subscriptions: await prisma.subscription.count({ where: { user: { clerkId } } }),
			}))

		proxy.freeze()
		const refused = await within(deliver(), 30_000, 'the webhook answer while the database hangs')
		// 500 server-error: the processor retries it; and nothing was recorded, so the retry is not a "duplicate".
		expect(refused).toEqual({ status: 500, body: { error: expect.any(String), code: 'server-error' } })
		expect(await stored()).toEqual({ events: 0, subscriptions: 0 })

		proxy.thaw()
		const deadline = Date.now() + 20_000
		let state = await status()
		while (state.processor_customer_id === null && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 250))
			state = await status()
		}
		expect(state.processor_customer_id).toBe(customer)

		expect(await deliver()).toEqual({ status: 200, body: { received: true } })
		expect(await status()).toEqual({
			plan: 'team',
			status: 'trialing',
			credits_daily: expect.any(Number),
			current_period_end: expect.any(String),
			processor_customer_id: customer,
			has_subscription: true,
		})
		expect(await stored()).toEqual({ events: 1, subscriptions: 1 })
		// A further redelivery (the processor may send it twice) changes nothing.
		expect(await deliver()).toEqual({ status: 200, body: { received: true } })
		expect(await stored()).toEqual({ events: 1, subscriptions: 1 })
	})
})

// A transaction whose connection is lost or stalls: the pooled connection must not be lost with it
// (each used to be, until every query waited for one), and a stall past the query timeout must not end
// the process (Prisma's own timeout sent a ROLLBACK nothing caught). The user's row held FOR UPDATE by
// another session makes the filing's insert wait on its foreign key, inside the transaction.
const ADMINISTRATOR = 'user_faults_administrator'

describe.runIf(inject('databaseKind') === 'postgres')('Transactions whose PostgreSQL connection is lost or stalls', () => {
	let standIns: StandIns
	let app: RunningApp
	let admin: pg.Client
	let locker: pg.Client
	let lockerPid: number

	beforeAll(async () => {
		const databaseUrl = await freshDatabaseUrl()
		standIns = await startStandIns()
		app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env, ADMIN_USER_IDS: ADMINISTRATOR })
		admin = new pg.Client({ connectionString: databaseUrl })
		locker = new pg.Client({ connectionString: databaseUrl })
		await Promise.all([admin.connect(), locker.connect()])
		lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
	})
	afterAll(async () => {
		await Promise.allSettled([admin?.end(), locker?.end()])
		await app?.stop()
		await standIns?.close()
	})

	async function signedInUser() {
		const id = newClerkUserId()
		standIns.clerkApi.setUser({ id, email: `${id}@example.com` })
		const headers = sessionHeaders(standIns.clerk, id)
		expect((await fetch(`${app.url}/api/billing/status`, { headers })).status).toBe(200) // creates the user's row
		return { id, file: () => postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${id}@example.com` }, headers) }
	}
	/** Holds the row `select` finds (one $1), as another session's transaction would, until ROLLBACK. */
	const holdRow = async (select: string, value: string) => {
		await locker.query('BEGIN')
		await locker.query(`${select} FOR UPDATE`, [value])
	}
	const holdUserRow = (clerkId: string) => holdRow('SELECT 1 FROM "User" WHERE "clerkId" = $1', clerkId)
	/** The app's session waiting on the held row (its insert, inside the filing's transaction). */
	async function waitingAppSession() {
		const deadline = Date.now() + 10_000
		for (;;) {
			const { rows } = await admin.query<{ pid: number }>(
				`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
				[lockerPid],
			)
			if (rows[0]) return rows[0].pid
			if (Date.now() > deadline) throw new Error('no app session waited on the held row within 10 s')
			await new Promise((resolve) => setTimeout(resolve, 20))
		}
	}
	const pendingRequests = async (clerkId: string) =>
		Number(
			(
				await admin.query<{ n: string }>(
					`SELECT count(*) AS n FROM "DeletionRequest" d JOIN "User" u ON u.id = d."userId" WHERE u."clerkId" = $1`,
					[clerkId],
				)
			).rows[0]!.n,
		)

	test('a session ended mid-transaction twelve times (the pool holds ten): each answers db-error, and the next filing is stored at once', async () => {
		expectServerLog(/^account-deletion: storing the request of user \S+ failed: /)
		const user = await signedInUser()
		for (let round = 1; round <= 12; round++) {
			await holdUserRow(user.id)
			const filing = user.file()
			await admin.query('SELECT pg_terminate_backend($1)', [await waitingAppSession()])
			const answer = await within(filing, 15_000, `round ${round}: the filing's answer`)
			expect(answer.status, `round ${round}`).toBe(500)
			expect(await answer.json()).toMatchObject({ code: 'db-error' })
			await locker.query('ROLLBACK')
		}
		// Each lost connection was given back to the pool: with ten lost, this filing would wait for one
		// (5 s) and then fail.
		const filed = await within(user.file(), 15_000, 'the filing after the incidents')
		expect(filed.status).toBe(200)
		expect(await filed.json()).toMatchObject({ saved: true })
		expect(await pendingRequests(user.id)).toBe(1)
	})

	// Checkout confirms a stored live subscription with the processor before its 409 (0029). The
	// confirmation's write waiting on the held row failed, and that failure was read as "the processor
	// could not be asked": 409 already-subscribed, though the processor had just said it was cancelled.
	test('a checkout whose confirming write waits past the query timeout is 500 server-error, not 409; the retry opens the checkout', async () => {
		expectServerLog(/^billing: checkout for user \S+ failed: /)
		const user = await signedInUser()
		const headers = sessionHeaders(standIns.clerk, user.id)
		const checkout = () => postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, headers)
		const opened = await checkout()
		expect(opened.status).toBe(200)
		const { subscription } = standIns.stripe.store.completeCheckout(
			String((await opened.json()).url)
				.split('/')
				.pop()!,
		)
		standIns.stripe.setWebhookUrl(`${app.url}/api/billing/webhook`)
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.created', subscription))).status).toBe(200)
		// Cancelled at the processor; its event never reaches the app.
		standIns.stripe.setSubscriptionStatus(String(subscription.id), 'canceled')
		await holdUserRow(user.id)
		try {
			const answer = await within(checkout(), 15_000, 'the checkout that waits on the held row')
			expect(answer.status).toBe(500)
			expect(await answer.json()).toMatchObject({ code: 'server-error' })
		} finally {
			await locker.query('ROLLBACK')
		}
		const retried = await within(checkout(), 15_000, 'the checkout once the row is free')
		expect(retried.status).toBe(200)
		expect((await retried.json()).url).toMatch(/\/checkout\/cs_/)
	}, 60_000)

	// The portal finds the customer unknown to the processor and forgets it (customer.server.ts). That
	// write failing was thrown: the account page's form showed the generic error page, not its notice.
	test('a portal click whose forgetting of an unknown customer waits past the query timeout: the page says to retry (500), and the retry forgets it', async () => {
		expectServerLog(
			/^billing: customer cus_\w+ of user \S+ is unknown to the processor /,
			/^billing: could not forget customer cus_\w+ of user \S+: /,
		)
		const user = await signedInUser()
		const headers = sessionHeaders(standIns.clerk, user.id)
		expect((await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, headers)).status).toBe(200)
		const storedCustomer = async () =>
			(await admin.query<{ id: string | null }>('SELECT "stripeCustomerId" AS id FROM "User" WHERE "clerkId" = $1', [user.id])).rows[0]!.id
		const customer = await storedCustomer()
		expect(customer).toMatch(/^cus_/)
		standIns.stripe.store.objects.delete(customer!) // deleted in the Dashboard
		const portalForm = () => postForm(`${app.url}/account`, { intent: 'portal' }, { ...headers, Origin: app.url })
		await holdUserRow(user.id)
		try {
			const page = await within(portalForm(), 15_000, 'the portal click that waits on the held row')
			expect(page.status).toBe(500)
			expect(await page.text()).toContain('Something went wrong on our side. Nothing was charged: please try again in a moment.')
		} finally {
			await locker.query('ROLLBACK')
		}
		expect(await storedCustomer()).toBe(customer)
		const retried = await within(portalForm(), 15_000, 'the portal click once the row is free')
		expect(retried.status).toBe(404)
		expect(await retried.text()).toContain('There is no billing account yet: choose a plan first.')
		expect(await storedCustomer()).toBeNull()
	}, 60_000)

	// The admin page's changes threw to the generic error page when the database failed them.
	test("an administrator's marking that waits past the query timeout: the page says nothing was changed (503), and the retry marks it", async () => {
		expectServerLog(/^account-deletion: an administrator's change failed: /)
		const user = await signedInUser()
		expect((await user.file()).status).toBe(200)
		const { rows } = await admin.query<{ id: string }>(
			`SELECT d.id FROM "DeletionRequest" d JOIN "User" u ON u.id = d."userId" WHERE u."clerkId" = $1`,
			[user.id],
		)
		const requestId = rows[0]!.id
		const mark = () =>
			postForm(
				`${app.url}/admin/deletion-requests`,
				{ intent: 'mark-processed', requestId, confirmed: 'yes' },
				{ ...sessionHeaders(standIns.clerk, ADMINISTRATOR), Origin: app.url },
			)
		await holdRow('SELECT 1 FROM "DeletionRequest" WHERE id = $1', requestId)
		try {
			const page = await within(mark(), 20_000, 'the marking that waits on the held row')
			expect(page.status).toBe(503)
			expect(await page.text()).toContain('Nothing was changed: the database did not answer. Try again in a moment.')
		} finally {
			await locker.query('ROLLBACK')
		}
		const status = async () =>
			(await admin.query<{ status: string }>('SELECT status FROM "DeletionRequest" WHERE id = $1', [requestId])).rows[0]!.status
		expect(await status()).toBe('pending')
		const retried = await within(mark(), 15_000, 'the marking once the row is free')
		expect(retried.status).toBe(303)
		expect(await status()).toBe('processed')
	}, 60_000)

	test('a transaction that waits past the query timeout answers db-error, leaves no session holding its locks, and the process keeps serving', async () => {
		expectServerLog(/^account-deletion: storing the request of user \S+ failed: /)
		const user = await signedInUser()
		await holdUserRow(user.id)
		try {
			const answer = await within(user.file(), 15_000, 'the filing that waits on the held row')
			expect(answer.status).toBe(500)
			expect(await answer.json()).toMatchObject({ code: 'db-error' })
			// Held 12 s in all: past the query timeout (5 s) and Prisma's transaction timeout (5 s) together.
			await new Promise((resolve) => setTimeout(resolve, 7_000))
			expect(app.process.exitCode).toBeNull()
			expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
			const { rows } = await admin.query(
				`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid NOT IN ($1, pg_backend_pid()) AND (state LIKE 'idle in transaction%' OR wait_event_type = 'Lock')`,
				[lockerPid],
			)
			expect(rows).toEqual([])
		} finally {
			await locker.query('ROLLBACK')
		}
		const filed = await within(user.file(), 15_000, 'the filing once the row is free')
		expect(filed.status).toBe(200)
		expect(await pendingRequests(user.id)).toBe(1)
		expect(app.errorOutput()).not.toMatch(/unhandled/)
	}, 60_000)
})
