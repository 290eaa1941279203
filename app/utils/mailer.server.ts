import crypto from 'node:crypto'
import { setMaxListeners } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import type MailMessage from 'nodemailer/lib/mailer/mail-message'
import SMTPPool from 'nodemailer/lib/smtp-pool'
import { env } from './env.server.ts'
import { type MailContent, prepareMessage, type PreparedMessage } from './mail/prepared-message.server.ts'
import { smtpTarget } from './mail/smtp-target.server.ts'

// Short timeouts: a web request waits on this, and nodemailer's defaults (2 min to connect, 10 min
// idle) would hold a visitor for minutes when the mail server is down or hanging.
const TIMEOUTS = { connectionTimeout: 4_000, greetingTimeout: 3_000, socketTimeout: 6_000 }

export const OUTBOX_DIR = path.resolve('data', 'outbox')

let pool: SMTPPool | undefined

function smtpPool(smtpUrl: string, maxConnections: number): SMTPPool {
	const { host, port, secure, requireTLS, auth } = smtpTarget(smtpUrl)
	return new SMTPPool({
		// Kept-open connections: a new SMTP handshake per message capped contact at ~170/s. Each carries
		// one message at a time and a visitor waits for it, so this many contact requests can be in
		// flight; beyond it they queue (docs/decisions/0022 for the measurements behind 10).
		maxConnections,
		// nodemailer's default recycles a connection every 100 messages; at a few hundred messages a
		// second that is a handshake per connection every ~0.6 s, with requests queued behind it
		// (contact p99 116–134 → 54–77 ms when recycling stopped). 1 000 keeps connections from
		// living forever on relays that limit them, at a tenth of the handshakes.
		maxMessages: 1_000,
		host,
		port,
		secure,
		requireTLS, // smtp-target.server.ts says when, and why
		auth,
		...TIMEOUTS,
	})
}

/**
 * The 200 that follows says the message is kept: it must be whole and on disk first. Written under a
 * hidden temporary name, flushed, then renamed, so a crash leaves either no .eml or a complete one.
 */
async function writeFileDurably(file: string, data: Buffer) {
	// A hidden temporary name of its own, so that nothing lists or opens a file still being written.
	const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${crypto.randomUUID()}.tmp`)
	// The owner's alone: a visitor's name, address and message are nobody else's on this machine.
	const handle = await fs.open(temporary, 'w', 0o600)
	try {
		try {
			await handle.writeFile(data)
			await handle.sync()
		} finally {
			await handle.close()
		}
		await fs.rename(temporary, file)
	} catch (error) {
		// A full disk (ENOSPC) left an empty hidden file per failed message: the visitor's 500 says try again.
		await fs.rm(temporary, { force: true }).catch(() => {})
		throw error
	}
	const folder = await fs.open(path.dirname(file), 'r')
	try {
		await folder.sync() // the rename itself
	} finally {
		await folder.close()
	}
}

/**
 * The longest a visitor waits for the mail server, the pool's queue included. The timeouts above end
 * a dead or hanging connection, but not the wait of the messages queued behind it: while a server
 * hung, each of them waited for every one ahead to time out in turn, without bound. Past this the
 * pool takes the message out of its queue (it is never sent later) or closes the connection
 * carrying it, and the visitor gets a 500 that is safe to retry (a message the server kept anyway
 * keeps its Message-ID on the retry, 0019).
 */
const MAIL_DEADLINE_MS = 10_000

// The messages handed over in the same quarter second share one signal, which aborts the deadline
// after the first of them: a controller per message costs ~6 µs here (node's EventTarget), ~2 % of a
// contact's CPU, and a listener on a shared one ~0.3 µs. So a message has 9.75–10 s.
const DEADLINE_BUCKET_MS = 250
let deadlineBucket: { startedAt: number; signal: AbortSignal } | undefined

function deadlineSignal(): AbortSignal {
	// The monotonic clock, as the timer's, so a bucket is never handed out after its deadline: a wall
	// clock stepped back (NTP, a resumed VM) would keep one whose signal had aborted, failing every
	// message at once.
	const now = performance.now()
	if (!deadlineBucket || now - deadlineBucket.startedAt >= DEADLINE_BUCKET_MS) {
		const controller = new AbortController()
		// One listener per message waiting in this bucket: no limit, or node warns past ten of them.
		setMaxListeners(0, controller.signal)
		setTimeout(
			() => controller.abort(new Error(`the mail server had not taken the message within ${MAIL_DEADLINE_MS / 1000} s`)),
			MAIL_DEADLINE_MS,
		).unref()
		deadlineBucket = { startedAt: now, signal: controller.signal }
	}
	return deadlineBucket.signal
}

/**
 * Hands the message to nodemailer's SMTP pool through the pool's transport interface, `send(mail,
 * callback)` with the mail's data and its MIME tree, the call nodemailer's own Mailer makes after it
 * has composed a message. The pool keeps its connections, retries a message a dropped connection
 * never started, and answers the server's refusals as before; only the composing is ours (0018).
 * The pool reads `mail.data` (signal: the deadline; dsn, requireTLSExtensionEnabled: not set) and the
 * message's headers, envelope and stream. nodemailer is pinned: check smtp-pool/ before updating.
 */
function sendThroughPool(smtp: SMTPPool, message: PreparedMessage) {
	const mail = { data: { signal: deadlineSignal() }, message } as unknown as MailMessage<SMTPPool.SentMessageInfo>
	return new Promise<SMTPPool.SentMessageInfo>((resolve, reject) => {
		smtp.send(mail, (error, info) => (error ? reject(error) : resolve(info!)))
	})
}

// A process stopped while writing (kill -9, a power cut) leaves its hidden temporary behind, never to
// be renamed: nothing was answered 200 for it. Each process clears those older than any write takes,
// once, before its first message (not newer ones: another process may be writing them).
const ABANDONED_AFTER_MS = 10 * 60_000
let outboxSwept = false

async function removeAbandonedTemporaries() {
	if (outboxSwept) return
	outboxSwept = true
	let removed = 0
	for (const name of await fs.readdir(OUTBOX_DIR).catch(() => [])) {
		if (!name.startsWith('.') || !name.endsWith('.tmp')) continue
		const file = path.join(OUTBOX_DIR, name)
		const stat = await fs.stat(file).catch(() => null)
		if (!stat || Date.now() - stat.mtimeMs < ABANDONED_AFTER_MS) continue
		if (
			await fs.rm(file).then(
				() => true,
				() => false,
			)
		)
			removed++
	}
	if (removed > 0) console.log(`mail: removed ${removed} unfinished outbox file(s) left by a process stopped while writing`)
}

export type SendResult = { delivered: 'smtp'; messageId: string } | { delivered: 'outbox'; file: string }

/**
 * Sends through SMTP_URL. Without it (development), the message is written to ./data/outbox/ as an
 * .eml file instead, so nothing is lost and a developer can open it.
 */
export async function sendMail(content: MailContent): Promise<SendResult> {
	const config = env()
	const message = prepareMessage(content)
	if (config.SMTP_URL) {
		pool ??= smtpPool(config.SMTP_URL, config.SMTP_MAX_CONNECTIONS)
		const info = await sendThroughPool(pool, message)
		return { delivered: 'smtp', messageId: info.messageId }
	}
	// Made private; one that exists keeps its mode (an operator's, or another user's): its files are 600.
	await fs.mkdir(OUTBOX_DIR, { recursive: true, mode: 0o700 })
	await removeAbandonedTemporaries()
	// Each accepted message is a file of its own, as each is a delivery through SMTP (contract: "each
	// message is written … nothing is lost"); a retried one keeps its Message-ID inside (0019). Named by
	// time, so the folder lists in the order they came, then by a random part, so none replaces another.
	const stamp = new Date().toISOString().replace(/[:.]/g, '-')
	const file = path.join(OUTBOX_DIR, `${stamp}-${crypto.randomUUID().slice(0, 8)}.eml`)
	await writeFileDurably(file, message.raw)
	console.log(`mail: SMTP_URL is not set; message written to ${file}`)
	return { delivered: 'outbox', file }
}
