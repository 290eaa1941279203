import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl, readStored, withDatabase } from '../support/database.ts'
import { postForm, postJson } from '../support/http.ts'
import { sessionCookie } from '../mocks/clerk.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { until } from '../support/deadline.ts'

let standIns: StandIns
let app: RunningApp
let databaseUrl: string

beforeAll(async () => {
	standIns = await startStandIns()
	databaseUrl = await freshDatabaseUrl()
	app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env })
})
afterAll(async () => {
	await app?.stop()
	await standIns?.close()
})
afterEach(() => standIns.clerkApi.setMode('ok'))

function userWithEmail(email: string) {
	const id = newClerkUserId()
	standIns.clerkApi.setUser({ id, email })
	return id
}

const fileRequest = (target: RunningApp, userId: string, body: unknown) =>
	postJson(`${target.url}/api/account/delete-request`, body, sessionHeaders(standIns.clerk, userId))

/** The account page's deletion form, posted as a browser posts it. */
const fileFromPage = (target: RunningApp, userId: string, fields: { confirmEmail: string; reason: string }) =>
	postForm(
		`${target.url}/account`,
		{ intent: 'delete-request', ...fields },
		{ ...sessionHeaders(standIns.clerk, userId), Origin: target.url },
	)

describe('POST /api/account/delete-request', () => {
	test('401 without a session, naming the Bearer scheme (RFC 9110 §15.5.2)', async () => {
		const response = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: 'a@b.test' })
		expect(response.status).toBe(401)
		expect(response.headers.get('www-authenticate')).toBe('Bearer')
		expect(await response.json()).toMatchObject({ code: 'unauthorized' })
	})

	test('the primary email typed back in another case and with spaces files a pending request', async () => {
		const userId = userWithEmail('Ada.Lovelace@Example.com')
		const response = await fileRequest(app, userId, { confirmEmail: '  ada.lovelace@EXAMPLE.com ', reason: 'Moving on' })
		expect(response.status).toBe(200)
		const body = await response.json()
		expect(body).toEqual({ ok: true, saved: true, request_id: expect.any(String), submitted_at: expect.any(String) })
		expect(body.request_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
		expect(body.submitted_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
	})

	test('an internationalised domain typed in its other spelling (Unicode or ASCII) is the same address', async () => {
		for (const [account, typed] of [
			['anna@bücher.de', 'Anna@XN--BCHER-KVA.de'],
			['anna@xn--bcher-kva.de', 'anna@BÜCHER.de'],
			// The same letter composed or as u + a combining diaeresis.
			['anna@b\u00fccher.de', 'anna@bu\u0308cher.de'],
		]) {
			const response = await fileRequest(app, userWithEmail(account!), { confirmEmail: typed })
			expect(response.status, `${account} typed as ${typed}`).toBe(200)
		}
	})

	test("the account's primary address confirms, wherever the provider lists it; another of its addresses is a mismatch", async () => {
		const userId = newClerkUserId()
		// The stand-in lists the primary after the others, as for a user who made a newer address primary.
		standIns.clerkApi.setUser({ id: userId, email: 'newer.primary@example.com', extraEmails: ['older@example.com'] })
		const older = await fileRequest(app, userId, { confirmEmail: 'older@example.com' })
		expect(older.status).toBe(400)
		expect(await older.json()).toMatchObject({ code: 'email-mismatch' })
		const primary = await fileRequest(app, userId, { confirmEmail: 'newer.primary@example.com' })
		expect(primary.status).toBe(200)
		expect(await primary.json()).toMatchObject({ ok: true, saved: true })
	})

	test('the address with an invisible character or a full-width letter in its domain is 400 email-mismatch, though a domain’s conversion to ASCII would drop or fold them', async () => {
		const userId = userWithEmail('ann@example.com')
		for (const typed of [
			'ann@exa\u200bmple.com',
			'ann@example.com\u00ad',
			'ann@exam\ufeffple.com',
			'ann@exam\u2060ple.com',
			'ann@\uff45xample.com',
		]) {
			const response = await fileRequest(app, userId, { confirmEmail: typed })
			expect(response.status, JSON.stringify(typed)).toBe(400)
			expect(await response.json()).toMatchObject({ code: 'email-mismatch' })
		}
	})

	test('a different email is 400 email-mismatch', async () => {
		const userId = userWithEmail('owner@example.com')
		const response = await fileRequest(app, userId, { confirmEmail: 'someone.else@example.com' })
		expect(response.status).toBe(400)
		expect(await response.json()).toMatchObject({ code: 'email-mismatch' })
	})

	test('a user the identity provider does not know is 401', async () => {
		const response = await fileRequest(app, newClerkUserId(), { confirmEmail: 'ghost@example.com' })
		expect(response.status).toBe(401)
		expect(await response.json()).toMatchObject({ code: 'unauthorized' })
	})

	test.each([['error500'], ['hang']] as const)('the identity provider answering %s is 503, never a 200', async (mode) => {
		expectServerLog(/^identity: \d+ lookup\(s\) failed since the last note \(the last, of \S+: /)
		const userId = userWithEmail('owner@example.com')
		standIns.clerkApi.setMode(mode)
		const asked = standIns.clerkApi.requests.length
		const response = await fileRequest(app, userId, { confirmEmail: 'owner@example.com' })
		expect(response.status).toBe(503)
		expect(await response.json()).toMatchObject({ code: 'identity-provider-unavailable' })
		// The answer comes from the provider failing, not from the app never asking it.
		expect(standIns.clerkApi.requests.slice(asked)).toContainEqual({ method: 'GET', path: `/v1/users/${userId}` })
	})

	test('after the identity provider failed as often as the per-user limit allows filings, a retry still works', async () => {
		expectServerLog(/^identity: \d+ lookup\(s\) failed since the last note \(the last, of \S+: /)
		const userId = userWithEmail('owner@example.com')
		const logged = app.output().length
		standIns.clerkApi.setMode('error500')
		for (let attempt = 0; attempt < 10; attempt++) {
			expect((await fileRequest(app, userId, { confirmEmail: 'owner@example.com' })).status).toBe(503)
		}
		// Ten failures, at most one note (none when an earlier test's note is less than a minute old).
		expect(
			app
				.output()
				.slice(logged)
				.match(/^identity: /gm)?.length ?? 0,
		).toBeLessThanOrEqual(1)
		standIns.clerkApi.setMode('ok')
		const retried = await fileRequest(app, userId, { confirmEmail: 'owner@example.com' })
		expect(retried.status).toBe(200)
		expect(await retried.json()).toMatchObject({ saved: true })
	})

	test.each([
		['a reason of 2000 characters', 200, { confirmEmail: 'owner@example.com', reason: 'x'.repeat(2000) }],
		['a reason of 2001 characters', 400, { confirmEmail: 'owner@example.com', reason: 'x'.repeat(2001) }],
		['a reason of 2000 emoji (characters, not UTF-16 units)', 200, { confirmEmail: 'owner@example.com', reason: '🎬'.repeat(2000) }],
		[
			'a reason of 2000 between spaces (measured after trimming)',
			200,
			{ confirmEmail: 'owner@example.com', reason: `  ${'x'.repeat(2000)}  ` },
		],
		// The contract refuses a reason only for its length: control characters are kept as U+FFFD ('what was stored').
		['a NUL in the reason (PostgreSQL text cannot hold it)', 200, { confirmEmail: 'owner@example.com', reason: 'a\u0000b' }],
		['an escape character in the reason', 200, { confirmEmail: 'owner@example.com', reason: 'a\u001bb' }],
		['line breaks and a tab in the reason', 200, { confirmEmail: 'owner@example.com', reason: 'line one\r\n\tline two' }],
		// JSON can carry half of a UTF-16 pair, which no UTF-8 text can hold: stored, it failed as a 500 "try again" every time.
		['a lone UTF-16 surrogate in the reason', 200, { confirmEmail: 'owner@example.com', reason: 'a\ud83d b \udc00' }],
		[
			'a reason of 2000 characters with CRLF line breaks (each counted once)',
			200,
			{ confirmEmail: 'owner@example.com', reason: 'x\r\n'.repeat(999) + 'xy' },
		],
		['no confirmEmail', 400, { reason: 'no email' }],
		['a confirmEmail of spaces', 400, { confirmEmail: '   ' }],
	] as Array<[string, number, Record<string, unknown>]>)('%s → %i', async (_label, expected, body) => {
		const userId = userWithEmail('owner@example.com')
		const response = await fileRequest(app, userId, body)
		expect(response.status).toBe(expected)
		if (expected === 400) expect(await response.json()).toMatchObject({ code: 'bad-body', issues: expect.any(Array) })
	})

	test('guessing the email is limited: ten a minute ask the identity provider, then 429 with Retry-After, asking nothing', async () => {
		const userId = userWithEmail('guarded@example.com')
		const asked = () => standIns.clerkApi.requests.filter((r) => r.path === `/v1/users/${userId}`).length
		const answers: Response[] = []
		for (let attempt = 0; attempt < 12; attempt++)
			answers.push(await fileRequest(app, userId, { confirmEmail: `guess${attempt}@example.com` }))
		expect(answers.map((answer) => answer.status)).toEqual([...Array(10).fill(400), 429, 429])
		expect(await answers[0]!.json()).toMatchObject({ code: 'email-mismatch' })
		expect(Number(answers[10]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
		expect(await answers[10]!.json()).toMatchObject({ code: 'rate-limited' })
		expect(asked()).toBe(10)
	})

	test("a confirmation of any length or type that is not the account's email is a mismatch, not a bad body", async () => {
		const userId = userWithEmail('owner@example.com')
		// A nesting of 5 000 arrays (10 KB of JSON, sent as written) once overflowed the stack of a
		// JSON.stringify on the server: a 500.
		const deep = `{"confirmEmail":${'['.repeat(5_000)}${']'.repeat(5_000)}}`
		const others = [`${'o'.repeat(400)}@example.com`, 42, ['owner@example.com'], { email: 'owner@example.com' }, true]
		for (const body of [...others.map((confirmEmail) => ({ confirmEmail })), deep]) {
			const response = await fileRequest(app, userId, body)
			expect(response.status, typeof body === 'string' ? 'deep' : JSON.stringify(body)).toBe(400)
			expect(await response.json()).toMatchObject({ code: 'email-mismatch' })
		}
	})

	test('filing again, and filing concurrently, give one request', async () => {
		const userId = userWithEmail('twice@example.com')
		const body = { confirmEmail: 'twice@example.com' }
		const first = await (await fileRequest(app, userId, body)).json()
		const again = await (await fileRequest(app, userId, body)).json()
		expect(again).toEqual(first)

		// Twenty at once, twice the per-user limit on asking the provider: they are one filing, so every
		// one gets the request (each took a point of the limit, and ten were 429). A real check on
		// PostgreSQL; the embedded database runs one statement at a time, so there most of them find the
		// request stored before they get to the provider.
		const racer = userWithEmail('race@example.com')
		const answers = await Promise.all(Array.from({ length: 20 }, () => fileRequest(app, racer, { confirmEmail: 'race@example.com' })))
		const bodies = await Promise.all(answers.map((r) => r.json()))
		expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200))
		expect(new Set(bodies.map((b) => b.request_id)).size).toBe(1)
		expect(new Set(bodies.map((b) => b.submitted_at)).size).toBe(1)
		const asked = standIns.clerkApi.requests.filter((r) => r.path === `/v1/users/${racer}`).length
		expect(asked).toBeGreaterThanOrEqual(1)
		expect(asked).toBeLessThan(10)
	})

	test('filing again with the same email gets the same request every time, past the per-user limit, without asking the provider again', async () => {
		const userId = userWithEmail('again@example.com')
		const first = await (await fileRequest(app, userId, { confirmEmail: 'again@example.com' })).json()
		const asked = () => standIns.clerkApi.requests.filter((r) => r.path === `/v1/users/${userId}`).length
		const askedForFirst = asked()
		expect(askedForFirst).toBeGreaterThanOrEqual(1)
		for (let attempt = 0; attempt < 12; attempt++) {
			const response = await fileRequest(app, userId, { confirmEmail: attempt % 2 ? ' AGAIN@example.com ' : 'again@example.com' })
			expect(response.status).toBe(200)
			expect(await response.json()).toEqual(first)
		}
		expect(asked()).toBe(askedForFirst)
		// Another email is checked with the provider as before.
		const other = await fileRequest(app, userId, { confirmEmail: 'someone.else@example.com' })
		expect(other.status).toBe(400)
		expect(await other.json()).toMatchObject({ code: 'email-mismatch' })
		expect(asked()).toBe(askedForFirst + 1)
	})
})

describe('a CLERK_SECRET_KEY the identity provider refuses', () => {
	test('filings answer 503 (safe to retry), and the log names the key, not an outage', async () => {
		expectServerLog(
			/^identity: 1 lookup\(s\) failed since the last note \(the last, of \S+: Clerk's Backend API refused CLERK_SECRET_KEY \(401\): check the key\)$/,
		)
		const misconfigured = await startApp({
			DATABASE_URL: await freshDatabaseUrl(),
			...standIns.env,
			CLERK_SECRET_KEY: 'sk_test_not_this_instance',
		})
		try {
			const userId = userWithEmail('owner@example.com')
			const response = await fileRequest(misconfigured, userId, { confirmEmail: 'owner@example.com' })
			expect(response.status).toBe(503)
			expect(await response.json()).toMatchObject({ code: 'identity-provider-unavailable' })
			await until(() => misconfigured.errorOutput().includes('refused CLERK_SECRET_KEY (401)'), 5_000, 'the note')
			expect(misconfigured.errorOutput()).not.toContain('sk_test_not_this_instance')
		} finally {
			await misconfigured.stop()
		}
	})
})

describe('when the database misbehaves', () => {
	test('table_missing: without the deletion table the answer is 200 with saved false; the page points to support', async () => {
		const url = await freshDatabaseUrl()
		await withDatabase(url, (prisma) => prisma.$executeRawUnsafe('DROP TABLE "DeletionRequest" CASCADE'))
		const isolated = await startApp({ DATABASE_URL: url, ...standIns.env })
		try {
			const userId = userWithEmail('owner@example.com')
			const response = await fileRequest(isolated, userId, { confirmEmail: 'owner@example.com' })
			expect(response.status).toBe(200)
			expect(await response.json()).toEqual({ ok: true, saved: false, table_missing: true })
			// The page's form says so (503), with a link to support that fills in the subject.
			const page = await fileFromPage(isolated, userId, { confirmEmail: 'owner@example.com', reason: '' })
			expect(page.status).toBe(503)
			const html = await page.text()
			expect(html).toContain('Account deletion cannot be requested here yet.')
			expect(html).toContain('<a href="/contact?subject=Delete+my+account">Write to support</a> and we will take care of it.')
			const contact = await (await fetch(`${isolated.url}/contact?subject=Delete+my+account`)).text()
			expect(contact).toMatch(/<input[^>]*name="subject"[^>]*value="Delete my account"/)
		} finally {
			await isolated.stop()
		}
	})

	test('db-error, not table_missing, when the deletion table is there and its audit trail’s is not; the retry stores once it is back', async () => {
		expectServerLog(/^account-deletion: storing the request of user \S+ failed: /)
		const url = await freshDatabaseUrl()
		const userId = userWithEmail('owner@example.com')
		const rename = (from: string, to: string) =>
			withDatabase(url, (prisma) => prisma.$executeRawUnsafe(`ALTER TABLE "${from}" RENAME TO "${to}"`))
		await rename('DeletionRequestEvent', 'DeletionRequestEventAway')
		// The embedded database is one process's: the app stops while the table is put back.
		let isolated = await startApp({ DATABASE_URL: url, ...standIns.env })
		try {
			const response = await fileRequest(isolated, userId, { confirmEmail: 'owner@example.com' })
			expect(response.status).toBe(500)
			expect(await response.json()).toEqual({ error: expect.any(String), code: 'db-error' })
		} finally {
			await isolated.stop()
		}
		await rename('DeletionRequestEventAway', 'DeletionRequestEvent')
		isolated = await startApp({ DATABASE_URL: url, ...standIns.env })
		try {
			const retried = await fileRequest(isolated, userId, { confirmEmail: 'owner@example.com' })
			expect(retried.status).toBe(200)
			expect(await retried.json()).toMatchObject({ ok: true, saved: true })
		} finally {
			await isolated.stop()
		}
	})

	test('db-error: a failing write answers 500 and nothing is half-written', async () => {
		expectServerLog(/^account-deletion: storing the request of user \S+ failed: /)
		const url = await freshDatabaseUrl()
		// The audit entry is the second write of the transaction: make it fail.
		await withDatabase(url, async (prisma) => {
			await prisma.$executeRawUnsafe(
				`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`,
			)
			await prisma.$executeRawUnsafe(`CREATE TRIGGER refuse BEFORE INSERT ON "DeletionRequestEvent" FOR EACH ROW EXECUTE FUNCTION refuse()`)
		})
		const isolated = await startApp({ DATABASE_URL: url, ...standIns.env })
		try {
			const userId = userWithEmail('owner@example.com')
			const response = await fileRequest(isolated, userId, { confirmEmail: 'owner@example.com' })
			expect(response.status).toBe(500)
			expect(await response.json()).toMatchObject({ code: 'db-error' })
		} finally {
			await isolated.stop()
		}
		const counts = await withDatabase(url, async (prisma) => [
			await prisma.deletionRequest.count(),
			await prisma.deletionRequestEvent.count(),
		])
		expect(counts).toEqual([0, 0])
	})
})

describe('what was stored', () => {
	test('one row per user, pending, with its audit entry, surviving a restart', async () => {
		const userId = userWithEmail('durable@example.com')
		const reason = ' Too busy\u0000 now\u001b \ud83d\r\nbye '
		const { request_id } = await (await fileRequest(app, userId, { confirmEmail: 'durable@example.com', reason })).json()
		// Read with the app stopped, on either database: what was answered 200 outlives the process.
		await app.stop()
		const stored = await withDatabase(databaseUrl, async (prisma) => ({
			rows: await prisma.deletionRequest.findMany({ where: { user: { clerkId: userId } }, include: { events: true } }),
		})).finally(async () => {
			app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env })
		})
		expect(stored.rows).toHaveLength(1)
		// Trimmed, each control character and lone surrogate kept as U+FFFD (PostgreSQL text cannot hold a
		// NUL, nor UTF-8 half a character), and a line break as typed.
		expect(stored.rows[0]).toMatchObject({
			id: request_id,
			status: 'pending',
			reason: 'Too busy\uFFFD now\uFFFD \uFFFD\nbye',
			processedAt: null,
		})
		// What proves the typed-back email on a later filing is a hash, not the address.
		expect(stored.rows[0]!.confirmedEmailHash).toMatch(/^[0-9a-f]{64}$/)
		expect(JSON.stringify(stored.rows[0])).not.toContain('durable@example.com')
		expect(stored.rows[0]!.events).toMatchObject([{ action: 'filed', actor: userId }])
	})

	test('filing again with the same email but a new reason each time gets the request sixty times a minute (each writes), then says to wait', async () => {
		const userId = userWithEmail('restless@example.com')
		const file = (reason: string) => fileRequest(app, userId, { confirmEmail: 'restless@example.com', reason })
		const first = await (await file('reason 0')).json()
		const answers: Response[] = []
		for (let attempt = 1; attempt <= 61; attempt++) answers.push(await file(`reason ${attempt}`))
		// Not the ten a minute of filings that ask the identity provider: these ask it nothing.
		expect(answers.map((answer) => answer.status)).toEqual([...Array(60).fill(200), 429])
		const limited = answers.at(-1)!
		expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
		expect(await limited.json()).toMatchObject({ code: 'rate-limited' })
		// The same reason again writes nothing and is never limited.
		const same = await file('reason 60')
		expect(same.status).toBe(200)
		expect(await same.json()).toEqual(first)
		// Another email still asks the provider, on a limit of its own that these did not spend.
		const other = await fileRequest(app, userId, { confirmEmail: 'someone.else@example.com' })
		expect(other.status).toBe(400)
		expect(await other.json()).toMatchObject({ code: 'email-mismatch' })
	})

	// The primary email changed at the provider since the filing: these filings ask the provider (in
	// bursts, one question shared), and each new reason was written with no limit at all.
	test('reasons changed by filings that ask the provider, all at once, count against the same sixty a minute', async () => {
		const userId = userWithEmail('first.address@example.com')
		const first = await (await fileRequest(app, userId, { confirmEmail: 'first.address@example.com' })).json()
		standIns.clerkApi.setUser({ id: userId, email: 'new.address@example.com' })
		const answers = await Promise.all(
			Array.from({ length: 70 }, (_, i) => fileRequest(app, userId, { confirmEmail: 'new.address@example.com', reason: `reason ${i}` })),
		)
		const statuses = answers.map((answer) => answer.status)
		expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([])
		expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(60)
		const limited = answers.find((answer) => answer.status === 429)!
		expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
		for (const answer of answers.filter((a) => a.status === 200)) expect(await answer.json()).toEqual(first)
	})

	// Each answer said saved: true, and the second reason was dropped: only the first was stored.
	test('filing again with another reason keeps that reason, on the same request, with an audit entry; filing without one keeps it', async () => {
		const userId = userWithEmail('second.thoughts@example.com')
		const file = (reason?: string) => fileRequest(app, userId, { confirmEmail: 'second.thoughts@example.com', reason })
		const first = await (await file('Moving to another tool')).json()
		const second = await file('Moving to another tool; please export my scripts first')
		expect(second.status).toBe(200)
		expect(await second.json()).toEqual(first)
		expect(await (await file()).json()).toEqual(first)
		await app.stop()
		const rows = await withDatabase(databaseUrl, (prisma) =>
			prisma.deletionRequest.findMany({ where: { user: { clerkId: userId } }, include: { events: { orderBy: { at: 'asc' } } } }),
		).finally(async () => {
			app = await startApp({ DATABASE_URL: databaseUrl, ...standIns.env })
		})
		expect(rows).toHaveLength(1)
		expect(rows[0]).toMatchObject({ id: first.request_id, reason: 'Moving to another tool; please export my scripts first' })
		expect(rows[0]!.events.map(({ action, actor }) => ({ action, actor }))).toEqual([
			{ action: 'filed', actor: userId },
			{ action: 'reason-changed', actor: userId },
		])
	})
})

describe('the account page without JavaScript', () => {
	test('a Free user is not asked to cancel a subscription they do not have', async () => {
		const userId = userWithEmail('never-paid@example.com')
		const html = await (await fetch(`${app.url}/account`, { headers: sessionHeaders(standIns.clerk, userId) })).text()
		expect(html).toContain('then deletes your account and its data.')
		expect(html).not.toContain('Cancel your subscription')
		expect(html).not.toContain('Manage billing')
	})

	test('the page says who is signed in and which address confirms a deletion', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: 'primary@example.com', extraEmails: ['second@example.com'] })
		const html = await (await fetch(`${app.url}/account`, { headers: sessionHeaders(standIns.clerk, userId) })).text()
		// A phone's narrow line may break the address only before its @ or a dot of its domain (<wbr>),
		// nowhere else (e2e/account-deletion.spec.ts measures the lines themselves).
		const address = 'primary<span><wbr/>@example</span><span><wbr/>.com</span>'
		expect(html).toContain(`Signed in as<!-- --> <strong>${address}</strong>`)
		expect(/<span[^>]*id="confirmEmail-hint"[^>]*>Your account&#x27;s email address is <!-- -->([^]*?)\.<\/span>/.exec(html)?.[1]).toBe(
			address,
		)
		expect(html).toMatch(/<input[^>]*aria-describedby="confirmEmail-hint"/)
		expect(html).not.toContain('second@example.com')
	})

	test('when the identity provider does not answer, the page still opens, without the address', async () => {
		expectServerLog(/^identity: \d+ lookup\(s\) failed since the last note \(the last, of \S+: no answer within 1500 ms\)$/)
		const userId = userWithEmail('unseen@example.com')
		standIns.clerkApi.setMode('hang')
		const response = await fetch(`${app.url}/account`, { headers: sessionHeaders(standIns.clerk, userId) })
		expect(response.status).toBe(200)
		const html = await response.text()
		expect(html).toContain('Delete your account')
		expect(html).toContain('Type your account&#x27;s email address to confirm')
		expect(html).not.toContain('Signed in as')
		expect(html).not.toContain('unseen@example.com')
	})

	test('with a request pending, a Free user is not told about billing, nor offered plans', async () => {
		const userId = userWithEmail('free@example.com')
		expect((await fileRequest(app, userId, { confirmEmail: 'free@example.com' })).status).toBe(200)
		const html = await (await fetch(`${app.url}/account`, { headers: sessionHeaders(standIns.clerk, userId) })).text()
		expect(html).toContain('You asked for your account to be deleted on')
		expect(html).toContain('A person on our team will process it; we will email you when it is done.')
		expect(html).not.toContain('billing has settled')
		expect(html).not.toContain('See plans')
	})

	test('filing again from the page with the same email is answered as the API answers it: at once, without the provider, past the limit', async () => {
		const userId = userWithEmail('page.again@example.com')
		const file = (confirmEmail: string) => fileFromPage(app, userId, { confirmEmail, reason: '' })
		expect((await file('page.again@example.com')).status).toBe(303)
		const asked = () => standIns.clerkApi.requests.filter((r) => r.path === `/v1/users/${userId}`).length
		const askedForFirst = asked()
		// A double submit, or the form sent again from a second tab, while the provider is failing.
		standIns.clerkApi.setMode('error500')
		for (let attempt = 0; attempt < 12; attempt++) {
			const again = await file(attempt % 2 ? ' PAGE.AGAIN@example.com' : 'page.again@example.com')
			expect(again.status).toBe(303)
			expect(again.headers.get('location')).toBe('/account?deletion=requested')
		}
		expect(asked()).toBe(askedForFirst)
	})

	test('an account with no email address (signed up with a phone number) is sent to support, not told each address it types is wrong', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: null })
		const api = await fileRequest(app, userId, { confirmEmail: 'me@example.com' })
		expect(api.status).toBe(400)
		expect(await api.json()).toMatchObject({ code: 'email-mismatch', detail: expect.stringContaining('no primary email address') })
		const page = await fileFromPage(app, userId, { confirmEmail: 'me@example.com', reason: 'please' })
		expect(page.status).toBe(400)
		const html = await page.text()
		expect(html).toContain('Your account has no email address, so a request cannot be confirmed here. Nothing was filed.')
		expect(html).toMatch(/<a href="\/contact\?subject=Delete(\+|%20)my(\+|%20)account">Write to support<\/a>/)
		expect(html).not.toContain('That is not the email address of this account.')
		const account = await (await fetch(`${app.url}/account`, { headers: sessionHeaders(standIns.clerk, userId) })).text()
		expect(account).not.toContain('You asked for your account to be deleted')
	})

	test('a filed request redirects to its confirmation (Post/Redirect/Get), titled and focused', async () => {
		const userId = userWithEmail('prg@example.com')
		const response = await fileFromPage(app, userId, { confirmEmail: 'prg@example.com', reason: '' })
		expect(response.status).toBe(303)
		expect(response.headers.get('location')).toBe('/account?deletion=requested')
		const html = await (await fetch(`${app.url}/account?deletion=requested`, { headers: sessionHeaders(standIns.clerk, userId) })).text()
		expect(html).toContain('<title>Deletion requested · Your account · Callsheet</title>')
		expect(html).toMatch(/role="status" tabindex="-1" autofocus=""[^>]*>[^]*You asked for your account to be deleted on/)
		// The same address without a pending request is the plain page.
		const other = userWithEmail('nothing@example.com')
		const plain = await (await fetch(`${app.url}/account?deletion=requested`, { headers: sessionHeaders(standIns.clerk, other) })).text()
		expect(plain).toContain('<title>Your account · Callsheet</title>')
	})
})

describe('the account page with a request already pending', () => {
	test('a mistyped or empty email from a second tab shows the pending request, not an error the page has no form to show', async () => {
		const userId = userWithEmail('two.tabs@example.com')
		expect((await fileRequest(app, userId, { confirmEmail: 'two.tabs@example.com' })).status).toBe(200)
		const page = (confirmEmail: string) => fileFromPage(app, userId, { confirmEmail, reason: '' })
		for (const typed of ['two.tabz@example.com', '']) {
			const response = await page(typed)
			expect(response.status).toBe(303)
			expect(response.headers.get('location')).toBe('/account')
		}
		const html = await (await fetch(`${app.url}/account`, { headers: sessionHeaders(standIns.clerk, userId) })).text()
		expect(html).toContain('<title>Your account · Callsheet</title>')
		expect(html).toContain('You asked for your account to be deleted on')
		// The API keeps the contract's answer: a different email is still 400 email-mismatch.
		const api = await fileRequest(app, userId, { confirmEmail: 'two.tabz@example.com' })
		expect(api.status).toBe(400)
		expect(await api.json()).toMatchObject({ code: 'email-mismatch' })
		// Without a pending request, the same mistake is the form's error, as before.
		const fresh = userWithEmail('one.tab@example.com')
		const refused = await fileFromPage(app, fresh, { confirmEmail: 'one.tabz@example.com', reason: '' })
		expect(refused.status).toBe(400)
		expect(await refused.text()).toContain('That is not the email address of this account.')
	})
})

describe('the account page without JavaScript, once the session token has expired', () => {
	test('a form post comes back to the page to be sent again, and nothing is filed', async () => {
		const userId = userWithEmail('late@example.com')
		const now = Math.floor(Date.now() / 1000)
		const expired = standIns.clerk.sign({ sub: userId, iat: now - 180, nbf: now - 180, exp: now - 120 })
		const response = await fetch(`${app.url}/account`, {
			method: 'POST',
			redirect: 'manual',
			headers: {
				Cookie: sessionCookie(expired),
				'Content-Type': 'application/x-www-form-urlencoded',
				Origin: app.url,
				'Sec-Fetch-Dest': 'document',
				Accept: 'text/html',
			},
			body: new URLSearchParams({ intent: 'delete-request', confirmEmail: 'late@example.com' }).toString(),
		})
		// Not Clerk's 307, which would make the browser post the form to Clerk (refused by the CSP).
		expect(response.status).toBe(303)
		expect(response.headers.get('location')).toBe('/account?session=refreshed')

		// Back on the page (signed in again after Clerk's handshake), it says what happened, and nothing
		// was filed: the deletion form is offered, not a pending request.
		const page = await fetch(`${app.url}/account?session=refreshed`, { headers: sessionHeaders(standIns.clerk, userId) })
		expect(page.status).toBe(200)
		const html = await page.text()
		expect(html).toContain('what you just sent was not received. Please send it again.')
		expect(html).toContain('name="confirmEmail"')
		expect(html).not.toContain('You asked for your account to be deleted on')
	})
})

describe('the account page and the API, the same typing', () => {
	test('file the same: the reason is stored alike (line breaks once, control characters as U+FFFD, Unicode as typed), the address in any spelling', async () => {
		const cases: Array<[account: string, typed: string, reason: string, stored: string | null]> = [
			['owner@example.com', 'owner@example.com', '  one\r\ntwo\rthree\nfour  ', 'one\ntwo\nthree\nfour'],
			['owner@example.com', 'owner@example.com', 'a\u0000b\u001bc\u007fd\te', 'a\ufffdb\ufffdc\ufffdd\te'],
			['owner@example.com', 'owner@example.com', '👨‍👩‍👧'.repeat(400), '👨‍👩‍👧'.repeat(400)],
			[
				'owner@example.com',
				'owner@example.com',
				'cafe\u0301 Zoë Ångström 山田 a\u2028b\u2029c\u0085d',
				'cafe\u0301 Zoë Ångström 山田 a\u2028b\u2029c\u0085d',
			],
			['owner@example.com', '\u00a0owner@example.com\t', '   ', null],
			['owner+tag@example.com', 'Owner+Tag@Example.COM', '\u00a0kept\u00a0', 'kept'],
			['owner@bücher.de', 'OWNER@BÜCHER.DE', 'x\r'.repeat(999) + 'xy', 'x\n'.repeat(999) + 'xy'],
		]
		const filed: Array<{ apiUser: string; pageUser: string; stored: string | null }> = []
		for (const [account, typed, reason, stored] of cases) {
			const apiUser = userWithEmail(account)
			const pageUser = userWithEmail(account)
			expect((await fileRequest(app, apiUser, { confirmEmail: typed, reason })).status, `${typed} ${reason}`).toBe(200)
			const page = await fileFromPage(app, pageUser, { confirmEmail: typed, reason })
			expect(page.status, `${typed} ${reason}`).toBe(303)
			filed.push({ apiUser, pageUser, stored })
		}
		const read = await readStored(app, { DATABASE_URL: databaseUrl, ...standIns.env }, (prisma) =>
			prisma.deletionRequest.findMany({ select: { reason: true, user: { select: { clerkId: true } } } }),
		)
		app = read.app
		const reasonOf = new Map(read.value.map((row) => [row.user.clerkId, row.reason]))
		for (const { apiUser, pageUser, stored } of filed) {
			expect(reasonOf.get(apiUser)).toBe(stored)
			expect(reasonOf.get(pageUser)).toBe(stored)
		}
	})

	test('a refused form comes back with both fields as typed, non-ASCII and line breaks included', async () => {
		const userId = userWithEmail('keeper@example.com')
		const response = await fileFromPage(app, userId, { confirmEmail: 'keepér@bücher.de', reason: 'Zoë 🎬\r\nsecond line 撮影' })
		expect(response.status).toBe(400)
		const html = await response.text()
		expect(html).toContain('That is not the email address of this account.')
		expect(html).toMatch(/<input[^>]*name="confirmEmail"[^>]*value="keepér@bücher.de"/)
		expect(html).toMatch(/<textarea[^>]*name="reason"[^>]*>Zoë 🎬\r\nsecond line 撮影<\/textarea>/)
	})
})
