import crypto from 'node:crypto'
import * as base64 from 'nodemailer/lib/base64'
import * as mimeFuncs from 'nodemailer/lib/mime-funcs'
import MimeNode from 'nodemailer/lib/mime-node'
import * as qp from 'nodemailer/lib/qp'

/** The one shape of mail this service sends: a text part and an HTML part of the same message. */
export type MailContent = {
	from: string
	to: string
	replyTo: { name: string; address: string }
	subject: string
	text: string
	html: string
	/**
	 * What makes this the same message when it is sent again. The Message-ID is derived from it, so a
	 * retry after a lost confirmation carries the first attempt's Message-ID and the inbox keeps one
	 * copy (docs/decisions/0019). Without it, every message gets a Message-ID of its own.
	 */
	retryKey?: string
}

type Envelope = { from: string | false; to: string[] }

/**
 * A message whose bytes are already written: what nodemailer's MailComposer writes for `{ from, to,
 * replyTo, subject, text, html }`, byte for byte (prepared-message.server.test.ts compares them), but
 * written at once instead of through nodemailer's chain of streams, and with the parts that are the
 * same in every message (the sender's and recipient's header lines, the envelope, the parts' content
 * types) encoded once per sender (docs/decisions/0018). Every value is still encoded by nodemailer's
 * own functions: headers by `MimeNode#encodeHeaderValue` and `foldLines`, bodies by its `qp` and
 * `base64` helpers, by the transfer encoding nodemailer's rules pick.
 *
 * nodemailer's SMTP pool reads a message through four methods (smtp-pool/, nodemailer pinned):
 * `getEnvelope`, `messageId`, `getHeader('message-id')` and `createReadStream`. This class has those.
 */
export class PreparedMessage {
	constructor(
		readonly raw: Buffer,
		/** The random part of the multipart boundary (the `baseBoundary` MailComposer would be given). */
		readonly baseBoundary: string,
		private readonly messageIdValue: string,
		private readonly envelope: Envelope,
	) {}

	messageId(): string {
		return this.messageIdValue
	}

	getHeader(key: string): string | undefined {
		return key.toLowerCase() === 'message-id' ? this.messageIdValue : undefined
	}

	/** A copy each time: the pool adds its own fields (dsn) to the envelope it is given. */
	getEnvelope(): Envelope {
		return { from: this.envelope.from, to: [...this.envelope.to] }
	}

	/**
	 * What nodemailer's SMTP pool reads the message from (again for each retry). Not a Readable: the
	 * connection takes anything with `pipe` (smtp-connection's send), so the bytes go straight into its
	 * dot-escaping stream, without a stream of their own to build, pipe and unpipe for each message
	 * (~3 % of contact's CPU; docs/performance.md). Without `on`, the connection keeps no listener on it.
	 * `readableDidRead` says, as a Readable's does, whether any byte went out: the pool resends a
	 * message on another connection only while it is false (a kept connection the server had closed).
	 */
	createReadStream(): MessageSource {
		const raw = this.raw
		return {
			readableDidRead: false,
			pipe(destination) {
				this.readableDidRead = true
				destination.end(raw)
				return destination
			},
		}
	}
}

export type MessageSource = {
	readableDidRead: boolean
	pipe<Destination extends NodeJS.WritableStream>(destination: Destination): Destination
}

/** nodemailer's header encoding, without a message: its instance methods read no message state. */
const encoder = new MimeNode(false, { baseBoundary: 'encoder' })

/** A header line as MimeNode#buildHeaders writes it: encoded, folded at 76; nothing when empty. */
function headerLine(key: string, value: Parameters<MimeNode['encodeHeaderValue']>[1]): string {
	const encoded = encoder.encodeHeaderValue(key, value)
	return encoded.trim() ? `${mimeFuncs.foldLines(`${key}: ${encoded}`, 76)}\r\n` : ''
}

// Text that reads as an RFC 2047 encoded word (`=?UTF-8?B?SGFja2Vk?=`) is shown decoded by mail
// clients, quoted or not: a subject or name typed so arrived as other words, or with a line break in
// it. nodemailer encodes only non-ASCII text, so such a value is encoded whole, and reads as typed.
const LOOKS_ENCODED = /=\?[^?]*\?[bq]\?[^?]*\?=/i
const encodedWhole = (text: string) => mimeFuncs.encodeWord(text, 'B', 52)
const asTypedWhenDecoded = (text: string) => (LOOKS_ENCODED.test(text) ? encodedWhole(text) : text)

/** The Reply-To line: the visitor's name as typed (above), then their address as nodemailer writes it. */
function replyToLine({ name, address }: MailContent['replyTo']): string {
	if (!LOOKS_ENCODED.test(name)) return headerLine('Reply-To', { name, address })
	// Written here: nodemailer would put the encoded name in quotes, where strict readers leave it encoded.
	const mailbox = encoder.encodeHeaderValue('Reply-To', { name: '', address })
	return `${mimeFuncs.foldLines(`Reply-To: ${encodedWhole(name)} <${mailbox}>`, 76)}\r\n`
}

/**
 * Lines that differ between messages only by a value of 32 hex digits (the boundary's random part, a
 * Message-ID's local part) are encoded once with this in its place, then the value is put in. Every
 * such value has the same length and kind of characters, so nodemailer's encoding and folding (at
 * 76, on whitespace) come out the same around it: ~4 µs of a message's ~20 when encoded each time.
 */
const PLACEHOLDER = '0'.repeat(32)

type Template = { before: string; after: string }

function template(line: string): Template {
	const at = line.indexOf(PLACEHOLDER)
	return { before: line.slice(0, at), after: line.slice(at + PLACEHOLDER.length) }
}

const fill = ({ before, after }: Template, hex32: string) => before + hex32 + after

type Sender = { lines: string; envelope: Envelope; messageId: Template }

const MAX_SENDERS = 8
const senders = new Map<string, Sender>()

/**
 * The From and To lines and the SMTP envelope, the same for every message with the same sender and
 * recipient (the service's configuration): encoded once. Bounded, so a caller varying them cannot
 * grow it. The envelope sender is From's address: MAIL_FROM is validated as a mailbox at start-up, so
 * nodemailer's fallback to Reply-To for a From without one never applies.
 */
function senderOf(from: string, to: string): Sender {
	const key = `${from}\n${to}`
	const known = senders.get(key)
	if (known) return known
	const node = new MimeNode(false, { baseBoundary: 'sender' })
	node.setHeader('From', from)
	node.setHeader('To', to)
	const envelope = node.getEnvelope()
	const domain = (envelope.from || 'localhost').split('@').pop()!
	const sender = {
		lines: headerLine('From', from) + headerLine('To', to),
		envelope,
		messageId: template(encoder.encodeHeaderValue('Message-ID', `<${PLACEHOLDER}@${domain}>`)),
	}
	if (senders.size >= MAX_SENDERS) senders.clear()
	senders.set(key, sender)
	return sender
}

/** A part's Content-Type as MimeNode writes it (parsed and rebuilt), for each of our two parts. */
const partContentType = (type: string) =>
	headerLine('Content-Type', mimeFuncs.buildHeaderValue(mimeFuncs.parseHeaderValue(type, { stripComments: true })))
const TEXT_PART = partContentType('text/plain; charset=utf-8')
const HTML_PART = partContentType('text/html; charset=utf-8')

/** The root is MimeNode's first node: its boundary is `--_NmP-<base>-Part_1`. */
const boundaryOf = (base: string) => `--_NmP-${base}-Part_1`
const ROOT_CONTENT_TYPE = template(
	headerLine('Content-Type', mimeFuncs.buildHeaderValue({ value: 'multipart/alternative', params: { boundary: boundaryOf(PLACEHOLDER) } })),
)

/** As MimeNode#getTransferEncoding for a text part holding a string (setContent's checks). */
function transferEncoding(content: string): '7bit' | 'quoted-printable' | 'base64' {
	if (mimeFuncs.isPlainText(content) && !mimeFuncs.hasLongerLines(content, 76)) return '7bit'
	return mostlyLatin(content) ? 'quoted-printable' : 'base64'
}

/** As MimeNode#_getTextEncoding: quoted-printable when latin letters outnumber the other bytes. */
function mostlyLatin(value: string): boolean {
	let nonLatin = 0
	let latin = 0
	for (let i = 0; i < value.length; i++) {
		const code = value.charCodeAt(i)
		if (code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f) || code >= 0x80) nonLatin++
		else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++
	}
	return nonLatin < latin
}

/** A leaf part: its headers, the blank line, its encoded body (as MimeNode#stream writes a text part). */
function part(contentTypeLine: string, content: string): string {
	if (!content) return `${contentTypeLine}\r\n`
	const encoding = transferEncoding(content)
	const body =
		encoding === 'quoted-printable'
			? qp.wrap(qp.encode(content), 76)
			: encoding === 'base64'
				? base64.wrap(base64.encode(content), 76)
				: content
	return `${contentTypeLine}Content-Transfer-Encoding: ${encoding}\r\n\r\n${body}`
}

export function prepareMessage(content: MailContent): PreparedMessage {
	const sender = senderOf(content.from, content.to)
	// One random value per message from randomUUID's buffered entropy: nodemailer draws 8 times from
	// crypto.randomBytes per message (a boundary per node and the Message-ID), ~60 µs of CPU here.
	const unique = crypto.randomUUID().replaceAll('-', '')
	const messageId = fill(sender.messageId, content.retryKey ? sameOnRetry(content.retryKey) : unique)
	const boundary = boundaryOf(unique)
	const headers =
		sender.lines +
		replyToLine(content.replyTo) +
		headerLine('Subject', asTypedWhenDecoded(content.subject)) +
		`Message-ID: ${messageId}\r\n` +
		`Date: ${new Date().toUTCString().replace(/GMT/, '+0000')}\r\n` +
		'MIME-Version: 1.0\r\n' +
		fill(ROOT_CONTENT_TYPE, unique)
	const written =
		`${headers}\r\n` +
		`--${boundary}\r\n${part(TEXT_PART, content.text)}` +
		`\r\n--${boundary}\r\n${part(HTML_PART, content.html)}` +
		`\r\n--${boundary}--\r\n`
	return new PreparedMessage(Buffer.from(written, 'utf8'), unique, messageId, sender.envelope)
}

/** 128 bits of a SHA-256 of the key: as unique as the random Message-ID, and the same for the same key. */
function sameOnRetry(retryKey: string): string {
	// The one-shot hash: no Hash object per message (Node 20.12+, package.json's engines).
	return crypto.hash('sha256', retryKey, 'hex').slice(0, 32)
}
