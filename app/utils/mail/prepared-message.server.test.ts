import { simpleParser } from 'mailparser'
import { PassThrough } from 'node:stream'
import MailComposer from 'nodemailer/lib/mail-composer'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { contactEmail, contactRetryKey } from '#app/modules/contact/contact-email.server.ts'
import { type MailContent, prepareMessage } from './prepared-message.server.ts'

// prepareMessage writes nodemailer's MIME tree itself instead of through nodemailer's streams. These
// tests hold it to nodemailer's own output, byte for byte, for the messages the service sends.

afterEach(() => {
	vi.useRealTimers()
})

/** nodemailer's Mailer composing the same content, with the same date, Message-ID and boundary. */
function composedByNodemailer(content: MailContent, unique: string, messageId: string) {
	return new MailComposer({ ...content, messageId, baseBoundary: unique }).compile()
}

async function expectSameAsNodemailer(content: MailContent) {
	vi.useFakeTimers({ now: new Date('2026-11-24T10:20:30.456Z'), toFake: ['Date'] })
	const prepared = prepareMessage(content)
	const messageId = prepared.getHeader('Message-ID') as string
	const composed = composedByNodemailer(content, prepared.baseBoundary, messageId)
	expect(prepared.raw.toString('utf8')).toBe((await composed.build()).toString('utf8'))
	// The envelope is worked out once per sender: still the one nodemailer derives for this message.
	expect(prepared.getEnvelope()).toEqual(composed.getEnvelope())
	expect(prepared.messageId()).toBe(composed.messageId())
}

const SENDERS = [
	{ to: 'support@localhost', from: 'no-reply@localhost' },
	{ to: 'Support <support@callsheet.app>', from: 'Callsheet <no-reply@callsheet.app>' },
	{ to: '"Équipe, support" <support@callsheet.app>', from: 'Callsheet Ünïcode <no-reply@callsheet.app>' },
	{ to: 'ops@bücher.de, Second <second@callsheet.app>', from: '"Callsheet, Inc." <no-reply@ünïcode.example>' },
]

const SUBMISSIONS = [
	{ name: 'Ada Lovelace', email: 'ada@example.com', subject: 'Invoices', message: 'Where are my invoices?' },
	{ name: 'Åsa "the" O\'Brien \\ <x>', email: 'anna@xn--bcher-kva.de', subject: 'é🎞'.repeat(250), message: 'é🎞\n'.repeat(2500) },
	{ name: 'A'.repeat(200), email: 'a@b.co', subject: 'S'.repeat(500), message: 'word '.repeat(1999) + 'end' },
	{ name: '山田太郎', email: 'taro@example.jp', subject: 'Long Japanese message', message: 'こんにちは世界。'.repeat(1250) },
	{ name: 'Dots', email: 'd@example.com', subject: 'dots', message: '.\n..\n.leading\r\nx\r\n.\r\nlast' },
	{ name: 'Spaces', email: 's@example.com', subject: 'Spaces  inside', message: 'tail  \nand\ttab\t\nbare\rCR' },
	{
		name: 'Hi\r\nBcc: victim@example.com',
		email: 'e@example.com',
		subject: 'Hi\r\nX-Injected: yes',
		message: '<script>alert(1)</script> & "quotes"',
	},
	{ name: 'x', email: 'x@example.com', subject: 'x', message: 'x\n'.repeat(5000) },
	// Where nodemailer's choice of transfer encoding turns: lines of 76 and 77 characters (7bit, then
	// quoted-printable), control characters counted against latin letters (then base64).
	{ name: 'Widths', email: 'w@example.com', subject: 'line of 76', message: 'a'.repeat(76) },
	{ name: 'Widths', email: 'w@example.com', subject: 'line of 77', message: 'b'.repeat(77) },
	{ name: 'Controls', email: 'c@example.com', subject: 'backspaces', message: '\b'.repeat(200) },
	...['\x0b', '\x0c', '\x0e', '\x1f', '\x7f', '\u0080'].map((char) => ({
		name: 'Controls',
		email: 'c@example.com',
		subject: `U+${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
		message: char.repeat(200),
	})),
]

describe('the retry key of a contact message', () => {
	const submission = SUBMISSIONS[0]!
	const at = (iso: string) => contactRetryKey(submission, new Date(iso))

	test('is the same for the same fields on the same day (UTC), whatever the time', () => {
		expect(at('2026-11-24T00:00:00.000Z')).toBe(at('2026-11-24T23:59:59.999Z'))
		expect(contactEmail(submission, SENDERS[0]!).retryKey).toBe(contactRetryKey(submission))
	})

	test('differs on another day and when any field differs', () => {
		const keys = [
			at('2026-11-24T12:00:00.000Z'),
			at('2026-11-25T12:00:00.000Z'),
			...(['name', 'email', 'subject', 'message'] as const).map((field) =>
				contactRetryKey({ ...submission, [field]: `${submission[field]}!` }, new Date('2026-11-24T12:00:00.000Z')),
			),
		]
		expect(new Set(keys).size).toBe(keys.length)
		// Fields are kept apart: text moved from one field into the next is another message.
		expect(contactRetryKey({ ...submission, name: 'Ada', subject: 'Lovelace' })).not.toBe(
			contactRetryKey({ ...submission, name: 'Ada Love', subject: 'lace' }),
		)
	})
})

describe('a prepared message', () => {
	test.each(
		SUBMISSIONS.flatMap((submission) =>
			SENDERS.map((sender) => [submission.subject.slice(0, 24), sender.from, submission, sender] as const),
		),
	)('is the message nodemailer writes: %s, from %s', async (_subject, _from, submission, sender) => {
		await expectSameAsNodemailer(contactEmail(submission, sender))
	})

	test('is the message nodemailer writes, with its envelope, for 1 000 random submissions', async () => {
		const alphabet = [
			'a',
			'Z',
			'0',
			' ',
			'  ',
			'\t',
			'\n',
			'\r\n',
			'\r',
			'.',
			'=',
			'-',
			'_',
			'é',
			'ß',
			'日本',
			'🎞',
			'\u00a0',
			'<',
			'&',
			'"',
		]
		let seed = 7
		const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
		const text = (max: number) =>
			Array.from({ length: 1 + Math.floor(random() * max) }, () => alphabet[Math.floor(random() * alphabet.length)])
				.join('')
				.trim() || 'x'
		const emails = ['fuzz@example.com', 'o.brien+tag@xn--bcher-kva.de', 'x@bücher.de', "a'b&c@sub.example.co.uk"]
		for (let i = 0; i < 1000; i++) {
			const email = emails[i % emails.length]!
			const submission = { name: text(40), email, subject: text(120), message: text(i % 10 === 0 ? 3000 : 300) }
			await expectSameAsNodemailer(contactEmail(submission, SENDERS[i % SENDERS.length]!))
		}
	})

	test('reads back as the content it was given', async () => {
		const content = contactEmail(SUBMISSIONS[1]!, SENDERS[2]!)
		const prepared = prepareMessage(content)
		const parsed = await simpleParser(prepared.raw)
		expect(parsed.subject).toBe(content.subject)
		expect(parsed.from?.value).toEqual([{ address: 'no-reply@callsheet.app', name: 'Callsheet Ünïcode' }])
		expect(parsed.to && 'value' in parsed.to ? parsed.to.value : []).toEqual([
			{ address: 'support@callsheet.app', name: 'Équipe, support' },
		])
		// mailparser shows the domain in Unicode; on the wire it stays in its ASCII form.
		expect(parsed.replyTo?.value).toEqual([{ name: content.replyTo.name, address: 'anna@bücher.de' }])
		expect(prepared.raw.toString()).toMatch(/^Reply-To: .*(\r\n .*)?<anna@xn--bcher-kva\.de>\r$/m)
		// The parts are written with CRLF line ends, as mail carries them; mailparser gives lines ending in LF.
		const asParsed = (part: string) => part.replaceAll('\r\n', '\n')
		expect(parsed.text).toBe(asParsed(content.text))
		expect(parsed.html).toBe(asParsed(content.html))
	})

	test('with short fields goes out as written: both parts 7bit, every line ending in CRLF', async () => {
		const content = contactEmail(SUBMISSIONS[0]!, SENDERS[1]!)
		const raw = prepareMessage(content).raw.toString('utf8')
		expect(raw.match(/^Content-Transfer-Encoding: .*$/gm)).toEqual(['Content-Transfer-Encoding: 7bit', 'Content-Transfer-Encoding: 7bit'])
		// Nothing for the SMTP client to rewrite: no bare LF or CR anywhere in the message.
		expect(raw).not.toMatch(/(?<!\r)\n|\r(?!\n)/)
		expect(raw).toContain('<div style="white-space:pre-wrap">Where are my invoices?</div>\r\n')
		const parsed = await simpleParser(raw)
		expect(parsed.html).toContain('<td>ada@example.com</td>')
		await expectSameAsNodemailer(content)
	})

	test.each([
		['a name of 62 characters', '7bit', { name: 'n'.repeat(62) }],
		['a name of 63 characters', 'quoted-printable', { name: 'n'.repeat(63) }],
		['a name of 12 `&` (62 once escaped)', '7bit', { name: '&'.repeat(12) }],
		['a name of 13 `&` (65 once escaped)', 'quoted-printable', { name: '&'.repeat(13) }],
		['a one-line message of 36 characters', '7bit', { message: 'm'.repeat(36) }],
		['a one-line message of 37 characters', 'quoted-printable', { message: 'm'.repeat(37) }],
	])('the HTML part of %s goes out %s, as nodemailer writes it', async (_case, encoding, fields) => {
		const content = contactEmail({ ...SUBMISSIONS[0]!, ...fields }, SENDERS[1]!)
		const raw = prepareMessage(content).raw.toString('utf8')
		const htmlPart = raw.slice(raw.indexOf('Content-Type: text/html'))
		expect(htmlPart).toMatch(new RegExp(`^Content-Transfer-Encoding: ${encoding}\r$`, 'm'))
		await expectSameAsNodemailer(content)
	})

	test('the largest message the contact limits allow is the message nodemailer writes, its parts under 64 KiB', async () => {
		// nodemailer's quoted-printable stream encodes in 64 KiB slices and may put a soft line break
		// near a slice's end where one pass over the whole part does not (both valid, the same once
		// decoded). Escaping makes `"` the longest character in the HTML part (6 bytes): even all of it
		// keeps the part under one slice, so the byte-for-byte comparison holds for every message.
		const email = `${"'&".repeat(32)}@example.com`
		const content = contactEmail({ name: '"'.repeat(200), email, subject: '"'.repeat(500), message: '"'.repeat(10_000) }, SENDERS[2]!)
		expect(Buffer.byteLength(content.html)).toBeLessThan(65_536)
		expect(Buffer.byteLength(content.html)).toBeGreaterThan(64_000)
		await expectSameAsNodemailer(content)
	})

	test('without a retry key: a Message-ID and a boundary of its own, on the sender domain, and an envelope from the addresses', () => {
		const { retryKey: _none, ...content } = contactEmail(SUBMISSIONS[0]!, SENDERS[1]!)
		const [first, second] = [prepareMessage(content), prepareMessage(content)]
		expect(first.getHeader('Message-ID')).toMatch(/^<[0-9a-f]{32}@callsheet\.app>$/)
		expect(first.getHeader('Message-ID')).not.toBe(second.getHeader('Message-ID'))
		const boundaryOf = (raw: Buffer) => /boundary="([^"]+)"/.exec(raw.toString())?.[1]
		expect(boundaryOf(first.raw)).toBeTruthy()
		expect(boundaryOf(first.raw)).not.toBe(boundaryOf(second.raw))
		expect(first.getEnvelope()).toEqual({ from: 'no-reply@callsheet.app', to: ['support@callsheet.app'] })
	})

	test('with a retry key: the Message-ID comes from the key, the boundary is still its own', () => {
		const content = contactEmail(SUBMISSIONS[0]!, SENDERS[1]!)
		const [first, second] = [prepareMessage(content), prepareMessage(content)]
		expect(first.getHeader('Message-ID')).toMatch(/^<[0-9a-f]{32}@callsheet\.app>$/)
		expect(second.getHeader('Message-ID')).toBe(first.getHeader('Message-ID'))
		expect(prepareMessage({ ...content, retryKey: `${content.retryKey} ` }).getHeader('Message-ID')).not.toBe(first.getHeader('Message-ID'))
		expect(second.baseBoundary).not.toBe(first.baseBoundary)
	})

	test('is read by nodemailer’s SMTP pool: piped whole into a stream, and marked read only then', async () => {
		const prepared = prepareMessage(contactEmail(SUBMISSIONS[0]!, SENDERS[0]!))
		const source = prepared.createReadStream()
		expect(source.readableDidRead).toBe(false)
		const chunks: Buffer[] = []
		const sink = new PassThrough()
		sink.on('data', (chunk: Buffer) => chunks.push(chunk))
		const ended = new Promise((resolve) => sink.on('end', resolve))
		expect(source.pipe(sink)).toBe(sink)
		await ended
		expect(source.readableDidRead).toBe(true)
		expect(Buffer.concat(chunks).equals(prepared.raw)).toBe(true)
		// Each read starts over: a retry on another connection sends the same bytes.
		expect(prepared.createReadStream().readableDidRead).toBe(false)
	})
})
