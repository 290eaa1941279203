// An SMTP sink on 127.0.0.1 that captures and parses every message, with fault modes for
// testing how the app reports mail failures. Facts: /work/shared/notes/stand-ins.md
import { listenOnLoopback } from './http-util.js'
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'

/**
 * `reject` answers 550 after DATA (nodemailer: EMESSAGE); `reject-rcpt` refuses recipients
 * (EENVELOPE); `hang` never sends the greeting; `hang-data` never answers the end of DATA;
 * `drop-after-data` keeps the message (it is in `messages`) and cuts the connection instead of
 * answering the end of DATA: the client cannot know whether the message was delivered;
 * `close-kept` answers 421 to the MAIL FROM of a connection's second and later messages and closes
 * it (a relay ending a kept connection as the next message starts: none of it was sent).
 */
export type SmtpMode = 'ok' | 'reject' | 'reject-rcpt' | 'hang' | 'hang-data' | 'drop-after-data' | 'close-kept'

export type CapturedMail = ParsedMail & {
	/** The message source exactly as received. */
	raw: string
	envelope: { from: string | null; to: string[] }
	/** Username from AUTH, when the client logged in. */
	authUser: string | null
	/** The password it logged in with (the sink accepts any; a relay would refuse a wrong one). */
	authPassword: string | null
}

/** A session the sink left waiting on purpose (mode `hang` or `hang-data`). */
export type HeldSession = {
	mode: 'hang' | 'hang-data'
	/** True once the connection has ended: the client gave up, or close()/dropConnections() cut it. */
	closed: boolean
}

export interface SmtpSink {
	port: number
	url: string
	messages: CapturedMail[]
	/** Every session held without an answer so far, in arrival order: how a test knows its client is stuck. */
	held: HeldSession[]
	/** Resolves with the first message (already received or future) matching `predicate`. */
	waitForMessage(predicate?: (mail: CapturedMail) => boolean, timeoutMs?: number): Promise<CapturedMail>
	setMode(mode: SmtpMode): void
	/** Cuts every open connection (a restarted server): pooled clients must connect anew. */
	dropConnections(): void
	/** Answers the end of each message's DATA this many ms late (a slow relay): a burst piles up. */
	setDataDelay(ms: number): void
	/** Every AUTH the sink was sent, message or not: what a client sent its password over. */
	logins: Array<{ user: string | undefined; password: string | null | undefined; secure: boolean }>
	/** The most SMTP connections that were open at the same time. */
	peakConnections(): number
	close(): Promise<void>
}

function smtpError(message: string, responseCode: number): Error {
	return Object.assign(new Error(message), { responseCode })
}

/** `address`: where it listens (127.0.0.1 unless a test needs a server off loopback). */
export async function startSmtpSink(opts: { mode?: SmtpMode; address?: string } = {}): Promise<SmtpSink> {
	const address = opts.address ?? '127.0.0.1'
	let mode: SmtpMode = opts.mode ?? 'ok'
	let dataDelayMs = 0
	let openConnections = 0
	let peakConnections = 0
	const messages: CapturedMail[] = []
	const waiters = new Set<(mail: CapturedMail) => void>()
	const held: HeldSession[] = []
	const heldBySession = new Map<string, HeldSession>()
	const passwords = new Map<string, string | null>()
	const logins: SmtpSink['logins'] = []
	const hold = (sessionId: string, heldMode: HeldSession['mode']) => {
		const session: HeldSession = { mode: heldMode, closed: false }
		held.push(session)
		heldBySession.set(sessionId, session)
	}

	const options: SMTPServerOptions = {
		authOptional: true,
		// smtp-server's built-in certificate is expired: no STARTTLS, plain connections only.
		disabledCommands: ['STARTTLS'],
		// Lets an SMTP_URL with credentials work without TLS; any login is accepted, and what it sent is
		// kept with each message.
		allowInsecureAuth: true,
		disableReverseLookup: true,
		closeTimeout: 100,
		logger: false,
		onAuth(auth, session, callback) {
			logins.push({ user: auth.username, password: auth.password, secure: session.secure })
			passwords.set(session.id, auth.password ?? null)
			callback(null, { user: auth.username ?? 'user' })
		},
		onConnect(session, callback) {
			openConnections++
			peakConnections = Math.max(peakConnections, openConnections)
			if (mode === 'hang') return hold(session.id, 'hang')
			callback()
		},
		onClose(session) {
			openConnections--
			const stuck = heldBySession.get(session.id)
			if (stuck) stuck.closed = true
			heldBySession.delete(session.id)
			passwords.delete(session.id)
		},
		onMailFrom(_address, session, callback) {
			const kept = (session.transaction ?? 1) > 1
			callback(mode === 'close-kept' && kept ? smtpError('Closing a kept connection (test sink)', 421) : undefined)
		},
		onRcptTo(_address, _session, callback) {
			callback(mode === 'reject-rcpt' ? smtpError('Recipient rejected (test sink)', 550) : undefined)
		},
		onData(stream, session, callback) {
			const chunks: Buffer[] = []
			stream.on('data', (chunk: Buffer) => chunks.push(chunk))
			stream.on('end', () => {
				if (mode === 'hang-data') return hold(session.id, 'hang-data')
				if (mode === 'reject') return callback(smtpError('Message rejected (test sink)', 550))
				const raw = Buffer.concat(chunks).toString('utf8')
				void simpleParser(raw).then(
					(parsed) => {
						const mail: CapturedMail = Object.assign(parsed, {
							raw,
							envelope: {
								from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
								to: session.envelope.rcptTo.map((r) => r.address),
							},
							authUser: typeof session.user === 'string' ? session.user : null,
							authPassword: passwords.get(session.id) ?? null,
						})
						messages.push(mail)
						for (const waiter of waiters) waiter(mail)
						if (mode === 'drop-after-data') return dropSession(session.remotePort)
						if (dataDelayMs > 0) return void setTimeout(callback, dataDelayMs)
						callback()
					},
					(error: unknown) => callback(smtpError(`Unparseable message: ${String(error)}`, 554)),
				)
			})
		},
	}
	const server = new SMTPServer(options)
	// Hung sessions (modes `hang`, `hang-data`) would otherwise keep close() waiting.
	const { port, sockets } = await listenOnLoopback(server, server.server, address)
	const dropSession = (clientPort: number) => {
		for (const socket of sockets) if (socket.remotePort === clientPort) socket.destroy()
	}

	let closing: Promise<void> | undefined
	return {
		port,
		url: `smtp://${address}:${port}`,
		messages,
		logins,
		held,
		setMode: (next) => void (mode = next),
		dropConnections: () => {
			for (const socket of sockets) socket.destroy()
		},
		setDataDelay: (ms) => void (dataDelayMs = ms),
		peakConnections: () => peakConnections,
		waitForMessage(predicate = () => true, timeoutMs = 5000) {
			const existing = messages.find(predicate)
			if (existing) return Promise.resolve(existing)
			return new Promise((resolve, reject) => {
				const waiter = (mail: CapturedMail) => {
					if (!predicate(mail)) return
					cleanup()
					resolve(mail)
				}
				const timer = setTimeout(() => {
					cleanup()
					reject(new Error(`No matching email within ${timeoutMs} ms (${messages.length} received)`))
				}, timeoutMs)
				const cleanup = () => {
					clearTimeout(timer)
					waiters.delete(waiter)
				}
				waiters.add(waiter)
			})
		},
		close() {
			closing ??= new Promise<void>((resolve) => {
				server.close(() => resolve())
				for (const socket of sockets) socket.destroy()
			})
			return closing
		},
	}
}
