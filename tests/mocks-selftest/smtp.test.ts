import nodemailer from 'nodemailer'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startSmtpSink, type SmtpSink } from '../mocks/smtp.js'
import { until } from '../support/deadline.js'

let sink: SmtpSink
beforeAll(async () => {
	sink = await startSmtpSink()
})
afterAll(() => sink.close())

// Short timeouts, as a web request would use; nodemailer's defaults are minutes.
function transport(port = sink.port, auth?: { user: string; pass: string }) {
	return nodemailer.createTransport({
		host: '127.0.0.1',
		port,
		secure: false,
		ignoreTLS: true,
		connectionTimeout: 1000,
		greetingTimeout: 500,
		socketTimeout: 1000,
		...(auth ? { auth } : {}),
	})
}

const message = {
	from: 'Callsheet <noreply@example.test>',
	to: 'team@example.test',
	replyTo: 'Visitor <visitor@example.test>',
	subject: '[Contact] Hello',
	text: 'plain <b>text</b>',
	html: '<p>&lt;b&gt;escaped&lt;/b&gt;</p>',
}

test('captures and parses a message', async () => {
	await transport().sendMail(message)
	const mail = await sink.waitForMessage((m) => m.subject === '[Contact] Hello')
	expect(mail.text?.trim()).toBe('plain <b>text</b>')
	expect(mail.html).toContain('&lt;b&gt;escaped&lt;/b&gt;')
	expect(mail.replyTo?.value[0]?.address).toBe('visitor@example.test')
	expect(mail.envelope).toEqual({ from: 'noreply@example.test', to: ['team@example.test'] })
	expect(mail.raw).toContain('Subject: [Contact] Hello')
	expect(mail.authUser).toBeNull()
})

test('accepts AUTH over plain SMTP (SMTP_URL with credentials)', async () => {
	await transport(sink.port, { user: 'mailer', pass: 'secret' }).sendMail({
		...message,
		subject: 'with auth',
	})
	expect((await sink.waitForMessage((m) => m.subject === 'with auth')).authUser).toBe('mailer')
})

test('waitForMessage waits for a future message and times out cleanly', async () => {
	const waiting = sink.waitForMessage((m) => m.subject === 'later')
	await transport().sendMail({ ...message, subject: 'later' })
	expect((await waiting).subject).toBe('later')
	await expect(sink.waitForMessage((m) => m.subject === 'never', 50)).rejects.toThrow(/No matching email/)
})

test.each([
	['reject', 'EMESSAGE'],
	['reject-rcpt', 'EENVELOPE'],
	['hang', 'ETIMEDOUT'],
	['hang-data', 'ETIMEDOUT'],
] as const)('mode %s → nodemailer %s', async (mode, code) => {
	const local = await startSmtpSink({ mode })
	try {
		await expect(transport(local.port).sendMail(message)).rejects.toMatchObject({ code })
		expect(local.messages).toHaveLength(0)
		// The hang modes held the session, and the sink saw the client give up on it.
		const hangs = mode === 'hang' || mode === 'hang-data'
		expect(local.held.map((h) => h.mode)).toEqual(hangs ? [mode] : [])
		await until(() => local.held.every((h) => h.closed), 5000, 'the client closed the held session')
	} finally {
		await local.close()
	}
})

test.each([['hang'], ['hang-data']] as const)('close() cuts a session held in mode %s: the pending send fails', async (mode) => {
	const local = await startSmtpSink({ mode })
	// Client timeouts longer than this test's own: only close() cutting the session can end the send.
	const patient = nodemailer.createTransport({
		host: '127.0.0.1',
		port: local.port,
		secure: false,
		ignoreTLS: true,
		connectionTimeout: 60_000,
		greetingTimeout: 60_000,
		socketTimeout: 60_000,
	})
	const pending = patient.sendMail(message).catch((error: unknown) => error)
	try {
		await until(() => local.held.length === 1, 5000, 'the sink held the session')
	} finally {
		await local.close()
	}
	expect(await pending).toMatchObject({ code: 'ECONNECTION' })
	expect(local.held.map((h) => h.mode)).toEqual([mode])
	expect(local.messages).toHaveLength(0)
})

test('server down → ESOCKET', async () => {
	const local = await startSmtpSink()
	const { port } = local
	await local.close()
	await expect(transport(port).sendMail(message)).rejects.toMatchObject({ code: 'ESOCKET' })
})
