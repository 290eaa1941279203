import crypto from 'node:crypto'
import { Readable } from 'node:stream'
import * as base64 from 'nodemailer/lib/base64'
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

/**
 * A message whose bytes are already written. It is nodemailer's own MIME tree (nodemailer encodes and
 * folds the headers, punycodes addresses, picks each part's transfer encoding, and derives the SMTP
 * envelope), written out once, synchronously, instead of through the chain of streams and
 * `setImmediate` hops nodemailer uses for a message of any shape: for a text + HTML message that
 * chain cost ~450 µs of CPU per message, most of POST /api/contact (docs/decisions/0018). The bytes
 * are the same as nodemailer's (prepared-message.server.test.ts compares them).
 */
export class PreparedMessage extends MimeNode {
	raw = Buffer.alloc(0)

	/** What nodemailer's SMTP pool reads the message from. */
	override createReadStream(): Readable {
		const raw = this.raw
		let sent = false
		return new Readable({
			read() {
				if (!sent) this.push(raw)
				sent = true
				this.push(null)
			},
		})
	}
}

export function prepareMessage(content: MailContent): PreparedMessage {
	// One random value per message from randomUUID's buffered entropy: nodemailer draws 8 times from
	// crypto.randomBytes per message (a boundary per node and the Message-ID), ~60 µs of CPU here.
	const unique = crypto.randomUUID().replaceAll('-', '')
	const root = new PreparedMessage('multipart/alternative', { baseBoundary: unique })
	root.setHeader('From', content.from)
	root.setHeader('To', content.to)
	root.setHeader('Reply-To', content.replyTo)
	root.setHeader('Subject', content.subject)
	const senderDomain = (root.getEnvelope().from || 'localhost').split('@').pop()
	root.setHeader('Message-ID', `<${content.retryKey ? sameOnRetry(content.retryKey) : unique}@${senderDomain}>`)
	root.createChild('text/plain; charset=utf-8', { baseBoundary: unique }).setContent(content.text)
	root.createChild('text/html; charset=utf-8', { baseBoundary: unique }).setContent(content.html)
	root.raw = Buffer.from(written(root), 'utf8')
	return root
}

/** 128 bits of a SHA-256 of the key: as unique as the random Message-ID, and the same for the same key. */
function sameOnRetry(retryKey: string): string {
	return crypto.createHash('sha256').update(retryKey).digest('hex').slice(0, 32)
}

/** The node as nodemailer's MimeNode#createReadStream writes it, for nodes whose content is text. */
function written(node: MimeNode): string {
	let out = `${node.buildHeaders()}\r\n\r\n`
	if (typeof node.content === 'string' && node.content) out += encodedBody(node.content, node.getTransferEncoding())
	else if (node.content) throw new Error('a prepared message holds text content only')
	if (node.multipart) {
		node.childNodes.forEach((child, index) => {
			out += `${index > 0 ? '\r\n' : ''}--${node.boundary}\r\n${written(child)}`
		})
		out += `\r\n--${node.boundary}--\r\n`
	}
	return out
}

function encodedBody(content: string, transferEncoding: string | false): string {
	if (transferEncoding === 'quoted-printable') return qp.wrap(qp.encode(content), 76)
	if (transferEncoding === 'base64') return base64.wrap(base64.encode(content), 76)
	return content
}
