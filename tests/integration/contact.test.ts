import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import zlib from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { startSmtpSink, type SmtpSink } from '../mocks/smtp.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { externalIPv4 } from '../support/network.ts'
import { postForm, postJson, uniqueIp } from '../support/http.ts'
import { projectRoot } from '../support/project.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'

let sink: SmtpSink
let app: RunningApp
const valid = { name: 'Ada Lovelace', email: 'ada@example.com', subject: 'Invoices', message: 'Where are my invoices?' }

beforeAll(async () => {
	sink = await startSmtpSink()
	app = await startApp({
		DATABASE_URL: await freshDatabaseUrl(),
		SMTP_URL: sink.url,
		CONTACT_TO: 'support@callsheet.test',
		MAIL_FROM: 'no-reply@callsheet.test',
		TRUST_PROXY: '1',
	})
})
afterAll(async () => {
	await app?.stop()
	await sink?.close()
})
afterEach(() => sink.setMode('ok'))

const contact = (body: unknown, ip = uniqueIp()) => postJson(`${app.url}/api/contact`, body, { 'X-Forwarded-For': ip })

/**
 * Subjects of the mail that arrived since `before`, read once a marker message (a valid submission
 * from another client) has arrived after everything the test sent before it: the app sends mail
 * before it answers, so a message an earlier request sent is in the sink by then.
 */
async function mailSince(before: number) {
	const subject = `Marker ${crypto.randomUUID()}`
	expect((await contact({ ...valid, subject })).status).toBe(200)
	await sink.waitForMessage((m) => m.subject === `[Contact] ${subject}`)
	return { marker: `[Contact] ${subject}`, arrived: sink.messages.slice(before).map((m) => m.subject) }
}

describe('POST /api/contact delivers the message', () => {
	test('200 { success: true } and the email arrives with the contract headers and both parts', async () => {
		// A subject of its own: other tests send `valid` too, and their mail must not stand in for this one.
		const subject = `Invoices ${crypto.randomUUID()}`
		const response = await contact({ ...valid, subject })
		expect(response.status).toBe(200)
		expect(await response.json()).toEqual({ success: true })
		const mail = await sink.waitForMessage((m) => m.subject === `[Contact] ${subject}`)
		expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe('support@callsheet.test')
		expect(mail.from?.text).toBe('no-reply@callsheet.test')
		expect(mail.replyTo?.value[0]).toMatchObject({ address: 'ada@example.com', name: 'Ada Lovelace' })
		expect(mail.text).toContain('Where are my invoices?')
		expect(mail.html).toContain('Where are my invoices?')
		expect(mail.envelope.to).toEqual(['support@callsheet.test'])
	})

	test('<script> in every field arrives HTML-escaped, in both parts of the body', async () => {
		const evil = '<script>alert(1)</script>'
		const response = await contact({ name: `N${evil}`, email: 'x@example.com', subject: `S${evil}`, message: `M${evil}` })
		expect(response.status).toBe(200)
		const escaped = '&lt;script&gt;alert(1)&lt;/script&gt;'
		const mail = await sink.waitForMessage((m) => m.text?.includes(`M${escaped}`) ?? false)
		expect(mail.html).not.toContain('<script>')
		expect(String(mail.html).split(escaped)).toHaveLength(4)
		expect(mail.text).not.toContain('<script>')
		expect(String(mail.text).split(escaped)).toHaveLength(4)
		// The raw message, headers aside (the subject line is not the body): no markup anywhere.
		const body = mail.raw.slice(mail.raw.indexOf('\r\n\r\n'))
		expect(body).not.toContain('<script>')
	})

	test('quotes and ampersands arrive escaped in the HTML part, so no field can close an attribute or start an entity', async () => {
		const response = await contact({ ...valid, subject: 'Quoted', message: `He said "hi" & 'bye' &amp;` })
		expect(response.status).toBe(200)
		const mail = await sink.waitForMessage((m) => m.subject === '[Contact] Quoted')
		expect(mail.html).toContain('He said &quot;hi&quot; &amp; &#39;bye&#39; &amp;amp;')
	})

	test('CR/LF in the subject or name cannot add a header, nor a line that reads as another field of the message', async () => {
		const response = await contact({
			...valid,
			name: 'Eve\r\nBcc: victim@example.com',
			subject: 'Hi\r\nBcc: victim@example.com\r\nX-Injected: yes',
		})
		expect(response.status).toBe(200)
		const mail = await sink.waitForMessage((m) => m.subject?.startsWith('[Contact] Hi') ?? false)
		expect(mail.headers.has('bcc')).toBe(false)
		expect(mail.headers.has('x-injected')).toBe(false)
		expect(mail.envelope.to).toEqual(['support@callsheet.test'])
		const headerBlock = mail.raw.split(/\r?\n\r?\n/)[0]!
		expect(headerBlock).not.toMatch(/^(Bcc|X-Injected):/im)
		// The plain-text part names each field on one line: what was typed into one cannot pose as another.
		const lines = String(mail.text).split(/\r?\n/)
		expect(lines).toContain('Name: Eve Bcc: victim@example.com')
		expect(lines).toContain('Subject: Hi Bcc: victim@example.com X-Injected: yes')
		expect(lines.filter((line) => /^(Bcc|X-Injected):/.test(line))).toEqual([])
	})
})

describe('text that looks like an RFC 2047 encoded word', () => {
	test('a subject typed like an encoded word arrives as typed, not decoded into other words or a line break', async () => {
		// RFC 2047 §2: any "=?charset?encoding?text?=" in an unstructured header is an encoded word, so a
		// sender writes such typed text encoded. Sent raw, the inbox shows what it decodes to, CR/LF included.
		for (const subject of ['=?UTF-8?B?SGFja2Vk?=', '=?UTF-8?Q?Refund_approved=0D=0AX-Priority:_1?=']) {
			const response = await contact({ ...valid, subject, message: `Typed as ${subject}` })
			expect(response.status).toBe(200)
			const mail = await sink.waitForMessage((m) => m.text?.includes(`Typed as ${subject}`) ?? false)
			expect(mail.subject).toBe(`[Contact] ${subject}`)
		}
	})

	test("a name typed like an encoded word is the Reply-To's name as typed", async () => {
		const name = '=?UTF-8?B?U3VwcG9ydCBUZWFt?='
		const response = await contact({ ...valid, name, subject: 'Name like an encoded word' })
		expect(response.status).toBe(200)
		const mail = await sink.waitForMessage((m) => m.subject === '[Contact] Name like an encoded word')
		expect(mail.replyTo?.value).toEqual([{ name, address: valid.email }])
	})
})

/** 252 characters in labels of at most 63: with `a@`, the longest address a mail server takes. */
const LONGEST_DOMAIN = ['b'.repeat(63), 'b'.repeat(63), 'b'.repeat(63), 'c'.repeat(60)].join('.')

describe('validation: every bound at its edge', () => {
	const cases: Array<[string, Record<string, unknown>, number]> = [
		['name of 1', { name: 'A' }, 200],
		['name of 200', { name: 'A'.repeat(200) }, 200],
		['name of 0', { name: '' }, 400],
		['name of spaces only', { name: '   ' }, 400],
		['name of 201', { name: 'A'.repeat(201) }, 400],
		// The interface counts characters: an emoji is one (two UTF-16 units).
		['name of 200 emoji', { name: '🎬'.repeat(200) }, 200],
		['name of 201 emoji', { name: '🎬'.repeat(201) }, 400],
		['subject of 500 accented letters and emoji', { subject: 'é🎞'.repeat(250) }, 200],
		['subject of 1', { subject: 'S' }, 200],
		['subject of 500', { subject: 'S'.repeat(500) }, 200],
		['subject of 0', { subject: '' }, 400],
		['subject of 501', { subject: 'S'.repeat(501) }, 400],
		['message of 1', { message: 'M' }, 200],
		['message of 10000', { message: 'M'.repeat(10_000) }, 200],
		['message of 0', { message: '' }, 400],
		['message of 10001', { message: 'M'.repeat(10_001) }, 400],
		// A line break counts once however it is written, as the form counts it (15 000 UTF-16 units here).
		['message of 10000 with CRLF line breaks', { message: 'x\r\n'.repeat(4_999) + 'xy' }, 200],
		['message of 10001 with CRLF line breaks', { message: 'x\r\n'.repeat(5_000) + 'x' }, 400],
		// JSON can carry half of a UTF-16 pair; it is kept as U+FFFD, as an unreadable byte is shown.
		['a name with a lone UTF-16 surrogate', { name: 'Ada \ud83d' }, 200],
		['a valid email', { email: 'a.b+c@sub.example.org' }, 200],
		['an invalid email', { email: 'not-an-email' }, 400],
		['an empty email', { email: '' }, 400],
		['an email on an internationalised domain', { email: 'anna@bücher.de' }, 200],
		['an email with a non-ASCII local part', { email: 'josé@example.com' }, 400],
		// What browsers take in <input type="email"> (zod's default rule refused the next three).
		["an email on a dotless domain, as the contract's own support@localhost", { email: 'visitor@localhost' }, 200],
		['an email with RFC 5322 local-part characters', { email: "o'hara!ops#1@example.ie" }, 200],
		['an email on an internationalised top-level domain', { email: 'anna@пример.рф' }, 200],
		['an email with a space', { email: 'ada lovelace@example.com' }, 400],
		['an email with two @', { email: 'ada@home@example.com' }, 400],
		['an email with no domain', { email: 'ada@' }, 400],
		['an email whose local part starts with a dot', { email: '.ada@example.com' }, 400],
		['an email whose local part ends with a dot', { email: 'ada.@example.com' }, 400],
		['an email with two dots in a row', { email: 'ada..lovelace@example.com' }, 400],
		// What a mail server takes (RFC 5321 §4.5.3.1): a longer address would be refused after a 200.
		['an email whose local part is 64 characters', { email: `${'x'.repeat(64)}@example.com` }, 200],
		['an email whose local part is 65 characters', { email: `${'x'.repeat(65)}@example.com` }, 400],
		['an email of 254 characters', { email: `a@${LONGEST_DOMAIN}` }, 200],
		['an email of 255 characters', { email: `ab@${LONGEST_DOMAIN}` }, 400],
		['an email with a domain label of 63 characters', { email: `a@${'b'.repeat(63)}.com` }, 200],
		['an email with a domain label of 64 characters', { email: `a@${'b'.repeat(64)}.com` }, 400],
		['an email with a domain label ending in a hyphen', { email: 'a@x-.com' }, 400],
		['a number as name', { name: 42 }, 400],
		['a missing field', { message: undefined }, 400],
	]
	test.each(cases.map(([label, patch, status]) => ({ label, patch, status })))('$label → $status', async ({ patch, status }) => {
		const response = await contact({ ...valid, ...patch })
		expect(response.status).toBe(status)
		if (status === 400) {
			const body = await response.json()
			expect(body).toMatchObject({ code: 'bad-body', error: expect.any(String), detail: expect.any(String) })
			expect(body.issues[0]).toEqual({ path: expect.any(String), message: expect.any(String) })
		}
	})

	test('surrounding whitespace is trimmed before the bounds apply', async () => {
		const response = await contact({ ...valid, name: `  ${'A'.repeat(200)}  `, subject: ' Trimmed subject ' })
		expect(response.status).toBe(200)
		const mail = await sink.waitForMessage((m) => m.subject === '[Contact] Trimmed subject')
		expect(mail.replyTo?.value[0]?.name).toBe('A'.repeat(200))
	})

	test('each issue names its field and what is wrong with it', async () => {
		const response = await contact({ name: 42, email: 7, subject: null, message: '   ' })
		expect(response.status).toBe(400)
		expect((await response.json()).issues).toEqual([
			{ path: 'name', message: 'Your name must be text.' },
			{ path: 'email', message: 'Email must be text.' },
			{ path: 'subject', message: 'Enter a subject.' },
			{ path: 'message', message: 'Enter your message.' },
		])
	})

	test('an internationalised domain reaches the inbox in its ASCII form', async () => {
		const response = await contact({ ...valid, email: 'anna@bücher.de', subject: 'From an IDN domain' })
		expect(response.status).toBe(200)
		const mail = await sink.waitForMessage((m) => m.subject === '[Contact] From an IDN domain')
		// As sent (mailparser shows the domain decoded again).
		expect(mail.raw).toMatch(/^Reply-To: .*<anna@xn--bcher-kva\.de>\r?$/m)
	})

	test('an address with RFC 5322 local-part characters is the Reply-To as typed; the body escapes it like every input', async () => {
		const email = "o'hara!ops#1@example.ie"
		const response = await contact({ ...valid, email, subject: 'From an unusual address' })
		expect(response.status).toBe(200)
		const mail = await sink.waitForMessage((m) => m.subject === '[Contact] From an unusual address')
		expect(mail.replyTo?.value).toEqual([{ name: valid.name, address: email }])
		expect(mail.text).toContain('Email: o&#39;hara!ops#1@example.ie')
		expect(mail.html).toContain('<td>o&#39;hara!ops#1@example.ie</td>')
	})

	test('a body of exactly 64 KiB is read (200); one byte more is 413 payload-too-large', async () => {
		const padded = (bytes: number) => {
			const json = JSON.stringify({ ...valid, subject: `At the size limit ${bytes}` })
			return json + ' '.repeat(bytes - Buffer.byteLength(json)) // JSON's own whitespace: the same submission
		}
		const send = (body: string) =>
			fetch(`${app.url}/api/contact`, {
				method: 'POST',
				headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': uniqueIp() },
				body,
			})
		const atLimit = await send(padded(65_536))
		expect(atLimit.status).toBe(200)
		const over = await send(padded(65_537))
		expect(over.status).toBe(413)
		expect(await over.json()).toMatchObject({ code: 'payload-too-large' })
	})

	// contract.md: bad-body carries `detail` and `issues` (from schema parsing; empty when none ran).
	const BAD_BODY_SHAPE = { detail: expect.any(String), issues: expect.any(Array) }
	test.each([
		{ label: 'text/plain', type: 'text/plain', body: JSON.stringify(valid), status: 400, code: 'bad-body', shape: BAD_BODY_SHAPE },
		{ label: 'no content type', type: '', body: JSON.stringify(valid), status: 400, code: 'bad-body', shape: BAD_BODY_SHAPE },
		{ label: 'invalid JSON', type: 'application/json', body: '{"name": ', status: 400, code: 'bad-body', shape: BAD_BODY_SHAPE },
		{ label: 'a JSON array', type: 'application/json', body: '[]', status: 400, code: 'bad-body', shape: BAD_BODY_SHAPE },
		{
			label: 'JSON declared in Latin-1',
			type: 'application/json; charset=iso-8859-1',
			body: Buffer.from(JSON.stringify({ ...valid, name: 'Zoë' }), 'latin1'),
			status: 400,
			code: 'bad-body',
			shape: BAD_BODY_SHAPE,
		},
		{
			label: 'bytes that are not UTF-8',
			type: 'application/json',
			body: Buffer.concat([
				Buffer.from('{"name":"Zo'),
				Buffer.from([0xeb]),
				Buffer.from(`","email":"a@b.co","subject":"s","message":"m"}`),
			]),
			status: 400,
			code: 'bad-body',
			shape: BAD_BODY_SHAPE,
		},
		{
			// RFC 8259 §8.1 lets a parser ignore a byte-order mark, and some Windows tools write one.
			label: 'JSON after a UTF-8 byte-order mark',
			type: 'application/json',
			body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(valid))]),
			status: 200,
			code: undefined,
			shape: {},
		},
		{
			label: 'charset="UTF-8"',
			type: 'application/json; charset="UTF-8"',
			body: JSON.stringify({ ...valid, name: 'Zoë' }),
			status: 200,
			code: undefined,
			shape: {},
		},
		{
			// US-ASCII is UTF-8's first half.
			label: 'charset=us-ascii',
			type: 'application/json; charset=us-ascii',
			body: JSON.stringify(valid),
			status: 200,
			code: undefined,
			shape: {},
		},
		{
			label: 'a gzip-compressed body (Content-Encoding is not taken)',
			type: 'application/json',
			encoding: 'gzip',
			body: Buffer.from(zlib.gzipSync(JSON.stringify(valid))),
			status: 400,
			code: 'bad-body',
			shape: { detail: 'The body must be sent without Content-Encoding (uncompressed).', issues: [] },
		},
		{
			label: 'a plain body labelled gzip',
			type: 'application/json',
			encoding: 'gzip',
			body: JSON.stringify(valid),
			status: 400,
			code: 'bad-body',
			shape: BAD_BODY_SHAPE,
		},
		{
			label: 'a 100 KiB body',
			type: 'application/json',
			body: JSON.stringify({ ...valid, message: 'x'.repeat(100 * 1024) }),
			status: 413,
			code: 'payload-too-large',
			shape: {},
		},
	] as Array<{
		label: string
		type: string
		encoding?: string
		body: string | Buffer<ArrayBuffer>
		status: number
		code?: string
		shape: object
	}>)('$label → $status $code', async ({ type, encoding, body, status, code, shape }) => {
		const response = await fetch(`${app.url}/api/contact`, {
			method: 'POST',
			headers: {
				...(type ? { 'Content-Type': type } : {}),
				...(encoding ? { 'Content-Encoding': encoding } : {}),
				'X-Forwarded-For': uniqueIp(),
			},
			body,
		})
		expect(response.status).toBe(status)
		expect(response.headers.get('content-type')).toMatch(/^application\/json/)
		const answer = await response.json()
		if (status === 200) expect(answer).toEqual({ success: true })
		else expect(answer).toMatchObject({ error: expect.any(String), code, ...shape })
	})

	test('GET on the POST-only route is 405 with Allow: POST', async () => {
		const response = await fetch(`${app.url}/api/contact`)
		expect(response.status).toBe(405)
		expect(response.headers.get('allow')).toBe('POST')
		expect(await response.json()).toMatchObject({ code: 'method-not-allowed' })
	})
})

describe('rate limit: 5 per minute per client IP', () => {
	test('a burst of 10 concurrent submissions gives exactly 5 × 200 and 5 × 429 with Retry-After', async () => {
		const ip = uniqueIp()
		const responses = await Promise.all(Array.from({ length: 10 }, () => contact(valid, ip)))
		const statuses = responses.map((r) => r.status).sort()
		expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429])
		for (const limited of responses.filter((r) => r.status === 429)) {
			const retryAfter = Number(limited.headers.get('retry-after'))
			expect(Number.isInteger(retryAfter)).toBe(true)
			expect(retryAfter).toBeGreaterThanOrEqual(1)
			expect(retryAfter).toBeLessThanOrEqual(60)
			expect(await limited.json()).toMatchObject({ code: 'rate-limited' })
		}
	})

	test('entries a client writes into X-Forwarded-For do not give it a fresh limit', async () => {
		const realIp = uniqueIp()
		const statuses: number[] = []
		for (let i = 0; i < 6; i++) statuses.push((await contact(valid, `203.0.113.${i + 1}, ${realIp}`)).status)
		expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
	})

	test('an IPv6 client picking a new address in its /64 for each message does not get a fresh limit; its neighbour /64 does', async () => {
		const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`
		const statuses: number[] = []
		for (let i = 0; i < 6; i++) statuses.push((await contact(valid, `${prefix}:${i + 1}:2:3:4`)).status)
		expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
		expect((await contact(valid, `${prefix.replace(/[0-9a-f]+$/, (group) => (parseInt(group, 16) ^ 1).toString(16))}::1`)).status).toBe(200)
	})

	test('the contact page and the API share one limit', async () => {
		const ip = uniqueIp()
		for (let i = 0; i < 4; i++) expect((await contact(valid, ip)).status).toBe(200)
		const page = await postForm(`${app.url}/contact`, valid, { 'X-Forwarded-For': ip, Origin: app.url })
		expect(page.status).toBe(303)
		const blocked = await postForm(`${app.url}/contact`, valid, { 'X-Forwarded-For': ip, Origin: app.url })
		expect(blocked.status).toBe(429)
		expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/)
		expect(await blocked.text()).toMatch(/Please wait about (\d+ seconds?|a minute)/)
		expect((await contact(valid, ip)).status).toBe(429)
	})
})

describe('the SMTP conversation', () => {
	test('credentials in SMTP_URL log in to the mail server, decoded', async () => {
		const withLogin = new URL(sink.url)
		withLogin.username = 'mailer%40callsheet.test'
		withLogin.password = 'p%2Fss%3Aword'
		const authed = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: withLogin.toString(), TRUST_PROXY: '1' })
		try {
			const subject = `Logged in ${crypto.randomUUID()}`
			expect((await postJson(`${authed.url}/api/contact`, { ...valid, subject }, { 'X-Forwarded-For': uniqueIp() })).status).toBe(200)
			const mail = await sink.waitForMessage((m) => m.subject === `[Contact] ${subject}`)
			expect(mail.authUser).toBe('mailer@callsheet.test')
			expect(mail.authPassword).toBe('p/ss:word')
		} finally {
			await authed.stop()
		}
	})

	// nodemailer upgrades with STARTTLS only when the server offers it: to a relay off this machine that
	// did not (or with the offer stripped on the way), the password went out in clear.
	test.skipIf(!externalIPv4())(
		'credentials for a mail server off this machine that offers no STARTTLS are never sent: 500, and no message leaves',
		async () => {
			const remote = await startSmtpSink({ address: externalIPv4() })
			const withLogin = new URL(remote.url)
			withLogin.username = 'mailer'
			withLogin.password = 'S3cret-pass'
			const authed = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: withLogin.toString(), TRUST_PROXY: '1' })
			try {
				expectServerLog(/^contact: mail transport failed \(ETLS\): Error upgrading connection with STARTTLS: /)
				const response = await postJson(`${authed.url}/api/contact`, valid, { 'X-Forwarded-For': uniqueIp() })
				expect(response.status).toBe(500)
				expect(await response.json()).toMatchObject({ code: 'server-error' })
				expect(remote.logins).toEqual([])
				expect(remote.messages).toEqual([])
			} finally {
				await authed.stop()
				await remote.close()
			}
		},
	)

	test('connections the mail server closed between messages are replaced: the next message is sent', async () => {
		expect((await contact(valid)).status).toBe(200)
		sink.dropConnections()
		const subject = `After the drop ${crypto.randomUUID()}`
		const response = await contact({ ...valid, subject })
		expect(response.status).toBe(200)
		await sink.waitForMessage((m) => m.subject === `[Contact] ${subject}`)
	})

	test('a kept connection the mail server ends as the next message starts (421): the message goes over a new one', async () => {
		expect((await contact(valid)).status).toBe(200)
		sink.setMode('close-kept')
		try {
			const subject = `Over a new connection ${crypto.randomUUID()}`
			const response = await contact({ ...valid, subject })
			expect(response.status).toBe(200)
			const mail = await sink.waitForMessage((m) => m.subject === `[Contact] ${subject}`)
			expect(sink.messages.filter((m) => m.messageId === mail.messageId)).toHaveLength(1)
		} finally {
			sink.setMode('ok')
		}
	})
})

describe('messages on their way to the mail server at once (SMTP_MAX_CONNECTIONS)', () => {
	// Each pooled connection carries one message at a time while its visitor waits: the setting is how
	// many contact requests can be with the mail server together, and what a relay that caps
	// connections per account is given at most (docs/decisions/0022).
	test.each([
		['10 by default', {}, 10],
		['SMTP_MAX_CONNECTIONS=2', { SMTP_MAX_CONNECTIONS: '2' }, 2],
	])(
		'%s: a burst against a slow mail server uses that many connections, and every message arrives',
		async (_label, settings, connections) => {
			const slow = await startSmtpSink()
			slow.setDataDelay(1000)
			const burstApp = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: slow.url, TRUST_PROXY: '1', ...settings })
			try {
				const subjects = Array.from({ length: 12 }, (_, i) => `Burst ${i} ${crypto.randomUUID()}`)
				const responses = await Promise.all(
					subjects.map((subject) => postJson(`${burstApp.url}/api/contact`, { ...valid, subject }, { 'X-Forwarded-For': uniqueIp() })),
				)
				expect(responses.map((response) => response.status)).toEqual(subjects.map(() => 200))
				expect(slow.messages.map((mail) => mail.subject).sort()).toEqual(subjects.map((subject) => `[Contact] ${subject}`).sort())
				expect(slow.peakConnections()).toBe(connections)
			} finally {
				await burstApp.stop()
				await slow.close()
			}
		},
	)
})

describe('mail transport failures: 500 server-error, the app lets go of the server, and safe to retry', () => {
	test('SMTP down → 500 server-error', async () => {
		expectServerLog(/^contact: mail transport failed \(/)
		const down = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: 'smtp://127.0.0.1:9', TRUST_PROXY: '1' })
		try {
			const response = await postJson(`${down.url}/api/contact`, valid, { 'X-Forwarded-For': uniqueIp() })
			expect(response.status).toBe(500)
			expect(await response.json()).toMatchObject({ code: 'server-error' })
		} finally {
			await down.stop()
		}
	})

	test.each([['reject'], ['hang'], ['hang-data']] as const)('SMTP %s → 500 server-error, and the try is refunded', async (mode) => {
		expectServerLog(/^contact: mail transport failed \(/)
		sink.setMode(mode)
		// The app keeps pooled connections open; a server that starts hanging on new connections is
		// only met once the old ones are gone.
		sink.dropConnections()
		const heldBefore = sink.held.length
		const ip = uniqueIp()
		const response = await contact(valid, ip)
		expect(response.status).toBe(500)
		expect(await response.json()).toMatchObject({ code: 'server-error' })
		// A hanging server was really met, and it was the app that gave up the session: the sink never
		// answers or closes a held one, so only the app's own timeout can end it.
		const held = sink.held.slice(heldBefore)
		expect(held.map((h) => h.mode)).toEqual(mode === 'reject' ? [] : [mode])
		await until(() => held.every((h) => h.closed), 10_000, 'the app closed the SMTP session it gave up on')
		// The failed attempt was refunded: the visitor still has all five tries.
		sink.setMode('ok')
		for (let i = 0; i < 5; i++) expect((await contact(valid, ip)).status).toBe(200)
	})

	test('a hanging mail server with messages queued behind it: every visitor gets 500 by the deadline, and a queued message is never sent later', async () => {
		expectServerLog(/^contact: mail transport failed \(/)
		const hanging = await startSmtpSink()
		// One connection: each message waits for the one ahead to time out (6 s) before it is tried.
		const queued = await startApp({
			DATABASE_URL: await freshDatabaseUrl(),
			SMTP_URL: hanging.url,
			TRUST_PROXY: '1',
			SMTP_MAX_CONNECTIONS: '1',
		})
		try {
			const send = (subject: string) => postJson(`${queued.url}/api/contact`, { ...valid, subject }, { 'X-Forwarded-For': uniqueIp() })
			// A first message while the server still answers: the pool's connection is open and the app's
			// code warm, so the four below are handed over together.
			hanging.setMode('ok')
			expect((await send(`Before ${crypto.randomUUID()}`)).status).toBe(200)
			hanging.setMode('hang-data')
			const subjects = Array.from({ length: 4 }, (_, i) => `Queued ${i} ${crypto.randomUUID()}`)
			const responses = await Promise.all(subjects.map(send))
			expect(responses.map((response) => response.status)).toEqual([500, 500, 500, 500])
			for (const response of responses) expect(await response.json()).toMatchObject({ code: 'server-error' })
			// Only what reached the connection before the deadline (10 s) met the server: the first message,
			// the second once the first had timed out, and (if the four straddled two of the deadline's
			// quarter seconds) a third in the moment between the two. Without the deadline all four did.
			expect(hanging.held.length).toBeLessThanOrEqual(3)
			await until(
				() => queued.output().includes('the mail server had not taken the message within 10 s'),
				5_000,
				'the log says why the messages failed',
			)
			await until(() => hanging.held.every((held) => held.closed), 10_000, 'the app closed the sessions it gave up on')
			// The server recovers: the next message goes, and none of the abandoned ones goes with it (as it
			// would if a visitor were answered at the deadline while their message stayed queued).
			hanging.setMode('ok')
			expect((await send(`After ${crypto.randomUUID()}`)).status).toBe(200)
			expect(hanging.messages.map((mail) => mail.subject).filter((subject) => subject?.startsWith('[Contact] Queued'))).toEqual([])
		} finally {
			await queued.stop()
			await hanging.close()
		}
	})

	test('a message the mail server kept but never confirmed → 500; the retry carries the same Message-ID, so the inbox keeps one copy', async () => {
		expectServerLog(/^contact: mail transport failed \(/)
		const submission = { ...valid, subject: `Unconfirmed ${crypto.randomUUID()}` }
		const ip = uniqueIp()
		sink.setMode('drop-after-data')
		const first = await contact(submission, ip)
		expect(first.status).toBe(500)
		expect(await first.json()).toMatchObject({ code: 'server-error' })
		sink.setMode('ok')
		expect((await contact(submission, ip)).status).toBe(200)
		expect((await contact({ ...submission, message: 'Something else entirely' }, ip)).status).toBe(200)

		const arrived = sink.messages.filter((m) => m.subject === `[Contact] ${submission.subject}`)
		expect(arrived.map((m) => m.text?.includes(valid.message))).toEqual([true, true, false])
		const [kept, retried, other] = arrived.map((m) => m.messageId)
		expect(kept).toMatch(/^<[0-9a-f]{32}@callsheet\.test>$/)
		expect(retried).toBe(kept)
		expect(other).not.toBe(kept)
	})
})

describe('the /contact page', () => {
	// Remix refuses a page form posted without JavaScript whose Origin matches neither X-Forwarded-Host
	// nor Host: behind a proxy that does not pass the public host on, every such form. Its Error went to the log with a stack per
	// request, saying nothing of the proxy.
	test("a form from APP_URL through a proxy that passes another host: Remix's 500, nothing sent, and the log says why once, not a stack per request", async () => {
		expectServerLog(
			/^forms: 1 page form\(s\) refused since the last note \(500\): Origin http:\/\/127\.0\.0\.1:\d+ came with X-Forwarded-Host upstream\.internal:3000, Host 127\.0\.0\.1:\d+\. The proxy must pass the public host on /,
		)
		const before = sink.messages.length
		for (let i = 0; i < 3; i++) {
			const response = await postForm(
				`${app.url}/contact`,
				{ ...valid, subject: 'Through a proxy', website: '' },
				{ Origin: app.url, 'X-Forwarded-Host': 'upstream.internal:3000', 'X-Forwarded-For': uniqueIp() },
			)
			expect(response.status).toBe(500)
		}
		const { arrived, marker } = await mailSince(before)
		expect(arrived).toEqual([marker])
		expect(app.errorOutput()).not.toContain('throwIfPotentialCSRFAttack')
		expect(app.errorOutput().match(/page form\(s\) refused since the last note/g)).toHaveLength(1)
	})

	test('line breaks count as typed: a message that fits the field is sent without JavaScript', async () => {
		// What a browser posts for 5 000 lines of one letter: 10 000 characters typed (with the line
		// breaks), 15 000 once each break is written as CRLF.
		const message = 'x\r\n'.repeat(4_999) + 'xy'
		const response = await postForm(
			`${app.url}/contact`,
			{ ...valid, subject: 'Many lines', message, website: '' },
			{ Origin: app.url, 'X-Forwarded-For': uniqueIp() },
		)
		expect(response.status).toBe(303)
		const mail = await sink.waitForMessage((m) => m.subject === '[Contact] Many lines')
		expect(mail.text).toContain('x\nx\nx')
	})

	test('the form is read by the rules of an API body: its media type in any case, UTF-8 only, nothing compressed', async () => {
		const before = sink.messages.length
		const post = (body: string | Buffer<ArrayBuffer>, headers: Record<string, string>) =>
			fetch(`${app.url}/contact`, {
				method: 'POST',
				headers: { Origin: app.url, 'X-Forwarded-For': uniqueIp(), ...headers },
				body,
				redirect: 'manual',
			})
		const form = (subject: string, name = 'Ada') =>
			new URLSearchParams({ ...valid, name, subject, website: '' }).toString().replace(encodeURIComponent(name), name)
		const accepted = await post(form('Upper-case type'), { 'Content-Type': 'APPLICATION/X-WWW-FORM-URLENCODED' })
		expect(accepted.status).toBe(303)
		const refused: Array<[string, string | Buffer<ArrayBuffer>, Record<string, string>, number]> = [
			['a longer media type', form('Longer type'), { 'Content-Type': 'application/x-www-form-urlencodedfoo' }, 415],
			['another charset', form('UTF-16'), { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-16' }, 415],
			[
				'compressed',
				Buffer.from(zlib.gzipSync(form('Gzip'))),
				{ 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'gzip' },
				415,
			],
			['an escaped byte that is not UTF-8', form('Escaped byte', 'Jos%E9'), { 'Content-Type': 'application/x-www-form-urlencoded' }, 400],
			['a broken escape', form('Broken escape', 'Jo%zz'), { 'Content-Type': 'application/x-www-form-urlencoded' }, 400],
			[
				'a raw byte that is not UTF-8, in the name',
				Buffer.concat([Buffer.from('name=Jos'), Buffer.from([0xe9]), Buffer.from(`&${form('Raw byte').replace(/^name=[^&]*&/, '')}`)]),
				{ 'Content-Type': 'application/x-www-form-urlencoded' },
				400,
			],
		]
		for (const [label, body, headers, status] of refused) {
			const response = await post(body, headers)
			expect(response.status, label).toBe(status)
			expect(response.headers.get('content-type'), label).toMatch(/^text\/html/)
		}
		const { marker, arrived } = await mailSince(before)
		expect(arrived).toEqual(['[Contact] Upper-case type', marker])
	})

	test('without JavaScript, a message the mail server refuses comes back in the form as typed, with the notice (500)', async () => {
		expectServerLog(/^contact: mail transport failed \(/)
		sink.setMode('reject')
		const typed = { ...valid, name: 'Ada "Countess" <Lovelace>', subject: 'Refused & kept', message: 'Line one\r\nLine <two>', website: '' }
		const response = await postForm(`${app.url}/contact`, typed, { Origin: app.url, 'X-Forwarded-For': uniqueIp() })
		expect(response.status).toBe(500)
		const html = await response.text()
		expect(html).toContain('We could not send your message just now. It is still in the form: please try again in a moment.')
		expect(html).toContain('value="Ada &quot;Countess&quot; &lt;Lovelace&gt;"')
		expect(html).toContain(`value="${valid.email}"`)
		expect(html).toContain('value="Refused &amp; kept"')
		expect(html).toMatch(/<textarea[^>]*name="message"[^>]*>Line one\r?\nLine &lt;two&gt;<\/textarea>/)
	})

	test('a same-origin form post sends the mail and redirects to the confirmation', async () => {
		const response = await postForm(
			`${app.url}/contact`,
			{ ...valid, subject: 'From the page', website: '' },
			{ Origin: app.url, 'X-Forwarded-For': uniqueIp() },
		)
		expect(response.status).toBe(303)
		expect(response.headers.get('location')).toBe('/contact?sent=1')
		await sink.waitForMessage((m) => m.subject === '[Contact] From the page')
		const confirmation = await (await fetch(`${app.url}/contact?sent=1`)).text()
		expect(confirmation).toContain('Message sent')
	})

	test('behind a proxy that gives the server its own Host and the public one in X-Forwarded-Host, the form still works', async () => {
		// nginx's default (`proxy_set_header Host $proxy_host`) with `X-Forwarded-Host $host`, as the
		// README asks: Remix compares the browser's Origin with X-Forwarded-Host, else with Host.
		const body = new URLSearchParams({ ...valid, subject: 'Through the proxy', website: '' }).toString()
		const status = await new Promise<number>((resolve, reject) => {
			const request = http.request(
				`${app.url}/contact`,
				{
					method: 'POST',
					headers: {
						Host: '127.0.0.1:3000',
						'X-Forwarded-Host': new URL(app.url).host,
						Origin: app.url,
						'X-Forwarded-For': uniqueIp(),
						'Content-Type': 'application/x-www-form-urlencoded',
						'Content-Length': Buffer.byteLength(body),
					},
				},
				(response) => (response.resume(), resolve(response.statusCode!)),
			)
			request.on('error', reject)
			request.end(body)
		})
		expect(status).toBe(303)
		await sink.waitForMessage((m) => m.subject === '[Contact] Through the proxy')
	})

	test('a browser that hides its origin (Origin: null under a no-referrer policy) still sends the form from our page', async () => {
		// Fetch spec: a POST under referrer policy "no-referrer" carries `Origin: null`; Sec-Fetch-Site,
		// which no page can set, still says where it came from. Remix's own check took "null" for
		// another site and answered 500.
		const response = await postForm(
			`${app.url}/contact`,
			{ ...valid, subject: 'Origin hidden', website: '' },
			{ Origin: 'null', 'Sec-Fetch-Site': 'same-origin', 'X-Forwarded-For': uniqueIp() },
		)
		expect(response.status).toBe(303)
		expect(response.headers.get('location')).toBe('/contact?sent=1')
		await sink.waitForMessage((m) => m.subject === '[Contact] Origin hidden')
	})

	test('Origin: null from another site, or with nothing else to go by, is refused and sends nothing', async () => {
		const before = sink.messages.length
		const opaque: Array<Record<string, string>> = [{ Origin: 'null', 'Sec-Fetch-Site': 'cross-site' }, { Origin: 'null' }]
		for (const headers of opaque) {
			const response = await postForm(
				`${app.url}/contact`,
				{ ...valid, subject: 'Opaque origin' },
				{ ...headers, 'X-Forwarded-For': uniqueIp() },
			)
			expect(response.status).toBe(403)
		}
		const { marker, arrived } = await mailSince(before)
		expect(arrived).toEqual([marker])
	})

	test('a message of 10 000 characters in any script is sent (url-encoded, Japanese is ~90 KB)', async () => {
		const message = '撮影予定の確認'.repeat(1_428) + '🎬🎬🎬🎬'
		expect([...message].length).toBe(10_000)
		const response = await postForm(
			`${app.url}/contact`,
			{ ...valid, subject: 'Long Japanese message', message },
			{ Origin: app.url, 'X-Forwarded-For': uniqueIp() },
		)
		expect(response.status).toBe(303)
		const mail = await sink.waitForMessage((m) => m.subject === '[Contact] Long Japanese message')
		expect(mail.text).toContain(message)
	})

	test('field errors come back with the input kept', async () => {
		const response = await postForm(
			`${app.url}/contact`,
			{ name: 'Kept Name', email: 'nope', subject: '', message: 'Kept message' },
			{ Origin: app.url, 'X-Forwarded-For': uniqueIp() },
		)
		expect(response.status).toBe(400)
		const html = await response.text()
		expect(html).toContain('Enter a valid email address.')
		expect(html).toContain('Enter a subject.')
		expect(html).toContain('value="Kept Name"')
		expect(html).toContain('Kept message')
		expect(html).toMatch(/aria-invalid="true"/)
	})

	test('a cross-site post is refused and sends nothing', async () => {
		const before = sink.messages.length
		const response = await postForm(
			`${app.url}/contact`,
			{ ...valid, subject: 'Cross-site' },
			{ Origin: 'https://evil.example', 'X-Forwarded-For': uniqueIp() },
		)
		expect(response.status).toBe(403)
		const bySecFetch = await postForm(
			`${app.url}/contact`,
			{ ...valid, subject: 'Cross-site' },
			{ 'Sec-Fetch-Site': 'cross-site', 'X-Forwarded-For': uniqueIp() },
		)
		expect(bySecFetch.status).toBe(403)
		const { marker, arrived } = await mailSince(before)
		expect(arrived).toEqual([marker])
	})

	test('a filled honeypot looks like success to the bot and sends nothing', async () => {
		const before = sink.messages.length
		const response = await postForm(
			`${app.url}/contact`,
			{ ...valid, subject: 'Bot', website: 'http://spam.example' },
			{ Origin: app.url, 'X-Forwarded-For': uniqueIp() },
		)
		expect(response.status).toBe(303)
		expect(response.headers.get('location')).toBe('/contact?sent=1') // where a person who sent a message goes
		const { marker, arrived } = await mailSince(before)
		expect(arrived).toEqual([marker])
	})
})

describe('the same submission from the page and from the API arrives as the same mail, read as typed', () => {
	/** The mail a send delivers: the app sends before it answers, so it is the next one in the sink. */
	async function delivered(send: () => Promise<Response>) {
		const before = sink.messages.length
		const response = await send()
		expect([200, 303]).toContain(response.status)
		await until(() => sink.messages.length > before, 5000, 'the mail of the send')
		return sink.messages[before]!
	}
	const escaped = (value: string) =>
		value.replace(/[&<>"']/g, (char) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '#39' }[char]};`)

	test.each([
		['an accented name and subject (RFC 2047)', { name: 'Zoë Ångström', subject: 'Über die Rechnung für Zoë' }],
		['a Japanese name and subject', { name: '山田 太郎', subject: '請求書について 質問があります' }],
		['emoji, a variation selector and a ZWJ family', { name: '🎬 Director 🎞️', subject: 'Shots 👨‍👩‍👧 and 🎬 scenes' }],
		['ASCII words between non-ASCII ones, spaces kept', { subject: 'Zoë and  Ångström and more ascii words here and Ürsula, the end' }],
		['a name of 200 encoded characters, folded over many lines', { name: 'Zoë '.repeat(49) + 'Zoë' }],
		['a name of 200 emoji', { name: '🎬'.repeat(200) }],
		['a subject of 500 Japanese characters', { subject: '撮影予定'.repeat(125) }],
		['a subject of 500 ASCII letters without a space', { subject: 'S'.repeat(500) }],
		['a subject with a tab and runs of spaces', { subject: 'a\tb    c' }],
		['a name with quotes, a comma, angle brackets, a backslash and an @', { name: 'Doe, John "JD" <jd@evil.test>; x\\y' }],
		['a long quoted name folded inside its quotes', { name: 'a, '.repeat(66) + 'a' }],
		['a name with an escape character and a next-line character (no header added)', { name: 'Eve\u0085Bcc: v@example.com\u000b' }],
		['a plus-tagged address', { email: 'ann+tag@example.com' }],
		['an address in upper case', { email: 'ANN.SMITH@EXAMPLE.COM' }],
		['lines that start with dots, as SMTP escapes them', { message: '.\n..\n.hidden\nend\n.' }],
		['lines that start with "From "', { message: 'From me\nFrom the start\n>From quoted' }],
		['CRLF, CR and LF line breaks mixed', { message: 'one\r\ntwo\rthree\nfour\r\n\r\nsix' }],
		['a line of 5 000 characters without a space', { message: 'x'.repeat(5000) }],
		['a long line of accented letters (quoted-printable)', { message: 'é'.repeat(3000) }],
		['dots landing at the start of quoted-printable lines', { message: ('é'.repeat(24) + '.' + 'x'.repeat(60)).repeat(5) }],
		['trailing spaces and tabs at line ends', { message: 'line   \nnext\t\nlast' }],
		['combining marks, flags and Unicode line separators', { message: 'cafe\u0301 🇯🇵 a\u2028b\u2029c' }],
		['control characters', { message: 'a\u0000b\u0007c\u001bd' }],
	] as Array<[string, Partial<typeof valid>]>)('%s', async (_label, patch) => {
		const fields = { ...valid, ...patch }
		const fromApi = await delivered(() => contact(fields))
		const fromPage = await delivered(() =>
			postForm(`${app.url}/contact`, { ...fields, website: '' }, { Origin: app.url, 'X-Forwarded-For': uniqueIp() }),
		)
		const asTyped = (value: string) => value.replace(/\r\n?/g, '\n').trim()
		const oneLine = (value: string) => asTyped(value).replace(/\n/g, ' ')
		for (const mail of [fromApi, fromPage]) {
			expect(mail.subject).toBe(`[Contact] ${oneLine(fields.subject)}`)
			// mailparser shows an internationalised domain decoded and a domain in lower case.
			expect(mail.replyTo?.value).toEqual([
				{ name: oneLine(fields.name), address: fields.email.replace(/@.*/, (domain) => domain.toLowerCase()) },
			])
			expect(mail.text).toContain(`\n\n${escaped(asTyped(fields.message))}\n`)
			expect(String(mail.html).replace(/\r\n/g, '\n')).toContain(
				`<div style="white-space:pre-wrap">${escaped(asTyped(fields.message))}</div>`,
			)
			expect([...mail.headers.keys()]).toEqual(['from', 'to', 'reply-to', 'subject', 'message-id', 'date', 'mime-version', 'content-type'])
		}
		expect(fromPage.text).toBe(fromApi.text)
		expect(fromPage.html).toBe(fromApi.html)
		expect(fromPage.messageId).toBe(fromApi.messageId)
	})

	test('after a refusal the page keeps every field as typed, non-ASCII and line breaks included', async () => {
		const typed = {
			name: 'Zoë Ångström 🎬 山田',
			email: 'zoë@bücher',
			subject: '',
			message: 'Line one 撮影\r\n  indented ✓\r\nLast',
			website: '',
		}
		const response = await postForm(`${app.url}/contact`, typed, { Origin: app.url, 'X-Forwarded-For': uniqueIp() })
		expect(response.status).toBe(400)
		const html = await response.text()
		expect(html).toMatch(/<input[^>]*name="name"[^>]*value="Zoë Ångström 🎬 山田"/)
		expect(html).toMatch(/<input[^>]*name="email"[^>]*value="zoë@bücher"/)
		expect(html).toMatch(/<textarea[^>]*name="message"[^>]*>Line one 撮影\r\n {2}indented ✓\r\nLast<\/textarea>/)
	})
})

describe('BENCH_RAISE_LIMITS (the benchmark lifts the limits, on loopback only)', () => {
	const burst = (target: RunningApp, ip: string) =>
		Promise.all(Array.from({ length: 8 }, () => postJson(`${target.url}/api/contact`, valid, { 'X-Forwarded-For': ip }))).then(
			(responses) => responses.map((r) => r.status).sort(),
		)

	test('a deployed server (public APP_URL) keeps its limits whatever the setting says', async () => {
		const deployed = await startApp({
			DATABASE_URL: await freshDatabaseUrl(),
			SMTP_URL: sink.url,
			TRUST_PROXY: '1',
			APP_URL: 'https://callsheet.example',
			BENCH_RAISE_LIMITS: '1',
		})
		try {
			expect(await burst(deployed, uniqueIp())).toEqual([200, 200, 200, 200, 200, 429, 429, 429])
			expect(deployed.output()).toContain('warning: BENCH_RAISE_LIMITS is ignored: it is honoured only when APP_URL is this machine')
		} finally {
			await deployed.stop()
		}
	})

	test('a server on a loopback APP_URL honours it', async () => {
		const benched = await startApp({
			DATABASE_URL: await freshDatabaseUrl(),
			SMTP_URL: sink.url,
			TRUST_PROXY: '1',
			BENCH_RAISE_LIMITS: '1',
		})
		try {
			expect(await burst(benched, uniqueIp())).toEqual(Array(8).fill(200))
			expect(benched.output()).toContain('warning: BENCH_RAISE_LIMITS=1: every rate limit is raised to 1,000,000 a window')
		} finally {
			await benched.stop()
		}
	})
})

describe('without SMTP_URL (development)', () => {
	test('start-up warns, and each message is kept whole as an .eml file in ./data/outbox/', async () => {
		const outbox = path.join(projectRoot, 'data', 'outbox')
		// What a process stopped while writing leaves behind: hidden, never renamed. One an hour old is
		// cleared; one from now may be another process's write in progress, and stays.
		fs.mkdirSync(outbox, { recursive: true, mode: 0o700 })
		const abandoned = path.join(outbox, `.abandoned-${crypto.randomUUID()}.eml.tmp`)
		const inProgress = path.join(outbox, `.in-progress-${crypto.randomUUID()}.eml.tmp`)
		fs.writeFileSync(abandoned, 'Subject: half a messa')
		fs.writeFileSync(inProgress, 'Subject: half a messa')
		const anHourAgo = new Date(Date.now() - 60 * 60_000)
		fs.utimesSync(abandoned, anHourAgo, anHourAgo)
		const local = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: undefined })
		const subject = `Outbox ${crypto.randomUUID()}`
		let kept: string | undefined
		let copies: string[] = []
		try {
			expect(local.output()).toContain('SMTP_URL not set: mail is NOT being delivered')
			const response = await postJson(`${local.url}/api/contact`, { ...valid, subject })
			expect(response.status).toBe(200)
			expect(await response.json()).toEqual({ success: true })
			// The 200 came after the file was in place: no waiting.
			const files = fs.readdirSync(outbox)
			kept = files.find((name) => name.endsWith('.eml') && fs.readFileSync(path.join(outbox, name), 'utf8').includes(subject))
			expect(kept).toBeDefined()
			copies = [kept!]
			const eml = fs.readFileSync(path.join(outbox, kept!), 'utf8')
			expect(eml).toMatch(/^To: support@localhost$/m)
			expect(eml).toMatch(/^Reply-To: Ada Lovelace <ada@example.com>$/m)
			expect(eml).toContain('Where are my invoices?')
			expect(eml.trimEnd()).toMatch(/--$/) // the last MIME boundary: the message is whole
			// The message's own temporary is gone (renamed); so is the abandoned one, and it is said.
			const temporaries = files.filter((name) => name.endsWith('.tmp'))
			expect(temporaries).toContain(path.basename(inProgress))
			expect(temporaries).not.toContain(path.basename(abandoned))
			expect(temporaries.filter((name) => !name.startsWith('.in-progress-'))).toEqual([])
			expect(local.output()).toMatch(/^mail: removed \d+ unfinished outbox file\(s\) left by a process stopped while writing$/m)
			// Readable by the server's own user only (it was 644: any account on the machine).
			expect((fs.statSync(path.join(outbox, kept!)).mode & 0o777).toString(8)).toBe('600')
			// Each 200 is a file, as each is a delivery through SMTP: the same message sent again is a second
			// file (named by time: listed in order), which keeps the Message-ID a retry keeps (0019).
			expect(kept).toMatch(/^\d{4}-\d{2}-\d{2}T[0-9-]+Z-[0-9a-f]{8}\.eml$/)
			expect((await postJson(`${local.url}/api/contact`, { ...valid, subject })).status).toBe(200)
			copies = fs.readdirSync(outbox).filter((name) => fs.readFileSync(path.join(outbox, name), 'utf8').includes(subject))
			expect(copies).toHaveLength(2)
			const messageIds = copies.map(
				(name) => /^Message-ID: (<[0-9a-f]{32}@localhost>)\r?$/m.exec(fs.readFileSync(path.join(outbox, name), 'utf8'))?.[1],
			)
			expect(messageIds[0]).toMatch(/^<[0-9a-f]{32}@localhost>$/)
			expect(messageIds[1]).toBe(messageIds[0])
		} finally {
			await local.stop()
			for (const name of copies) fs.rmSync(path.join(outbox, name), { force: true })
			for (const file of [abandoned, inProgress]) fs.rmSync(file, { force: true })
		}
	})
})
