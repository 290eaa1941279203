// A loopback-only HTTP server, started by the global setup, through which test workers read and
// steer the stand-ins that live in the runner process (SMTP sink, fake Clerk Backend API, fake
// Stripe). Workers reach it with the helpers in control.ts (E2E_CONTROL_URL + E2E_CONTROL_TOKEN).
//
//   GET    /mail                 messages received by the SMTP sink (oldest first)
//   POST   /clerk/users          {id, email, extraEmails?, firstName?, lastName?}: register a user
//   DELETE /clerk/users/:id      forget a user (the app then gets Clerk's 404)
//   GET    /stripe/requests      requests the fake Stripe API received (method, path, params)
//   GET    /stripe/deliveries    webhook deliveries to the app (event type, status, error)
//
// Every request needs `Authorization: Bearer <token>` and a Host of 127.0.0.1:<port>, so neither
// another local process nor a page in the browser under test (DNS rebinding) can drive it.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import { listenOnLoopback } from '../../tests/mocks/http-util.ts'
import type { AddressObject } from 'mailparser'
import type { StandIns } from '../../tests/mocks/serve-all.ts'
import type { CapturedMail } from '../../tests/mocks/smtp.ts'

export interface MailAddress {
	name: string
	address: string
}

/** One message as the control server hands it out (JSON-safe). */
export interface ControlMail {
	subject: string
	from: MailAddress[]
	to: MailAddress[]
	replyTo: MailAddress[]
	text: string
	html: string
	date: string | null
	envelope: { from: string | null; to: string[] }
}

export interface ControlStripeRequest {
	method: string
	path: string
	params: unknown
}

export interface ControlStripeDelivery {
	eventId: string
	type: string
	/** id of the event's data.object (cs_…, sub_…) and its customer, to find a test's own events. */
	objectId: string | null
	customer: string | null
	status: number | null
	error: string | null
}

export interface ControlServer {
	url: string
	token: string
	close(): Promise<void>
}

const MAX_BODY_BYTES = 64 * 1024

function addresses(value: AddressObject | AddressObject[] | undefined): MailAddress[] {
	const list = value === undefined ? [] : Array.isArray(value) ? value : [value]
	return list.flatMap((entry) => entry.value.map((a) => ({ name: a.name ?? '', address: a.address ?? '' })))
}

export function mailToJson(mail: CapturedMail): ControlMail {
	return {
		subject: mail.subject ?? '',
		from: addresses(mail.from),
		to: addresses(mail.to),
		replyTo: addresses(mail.replyTo),
		text: mail.text ?? '',
		html: typeof mail.html === 'string' ? mail.html : '',
		date: mail.date ? mail.date.toISOString() : null,
		envelope: mail.envelope,
	}
}

function send(res: http.ServerResponse, status: number, body: unknown) {
	const text = JSON.stringify(body)
	res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' })
	res.end(text)
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
	const chunks: Buffer[] = []
	let size = 0
	for await (const chunk of req as AsyncIterable<Buffer>) {
		size += chunk.length
		if (size > MAX_BODY_BYTES) throw Object.assign(new Error('body too large'), { status: 413 })
		chunks.push(chunk)
	}
	try {
		return JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as unknown
	} catch {
		throw Object.assign(new Error('body is not JSON'), { status: 400 })
	}
}

function sameToken(given: string, expected: string): boolean {
	const a = Buffer.from(given)
	const b = Buffer.from(expected)
	return a.length === b.length && timingSafeEqual(a, b)
}

function isUserBody(body: unknown): body is { id: string; email: string; extraEmails?: string[]; firstName?: string; lastName?: string } {
	if (typeof body !== 'object' || body === null) return false
	const { id, email, extraEmails } = body as Record<string, unknown>
	return (
		typeof id === 'string' &&
		id.length > 0 &&
		typeof email === 'string' &&
		email.includes('@') &&
		(extraEmails === undefined || (Array.isArray(extraEmails) && extraEmails.every((e) => typeof e === 'string')))
	)
}

export async function startControlServer(standIns: StandIns): Promise<ControlServer> {
	const token = randomBytes(24).toString('base64url')
	let host = ''

	const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
		if (req.headers.host !== host) return send(res, 421, { error: 'wrong Host' })
		const auth = req.headers.authorization ?? ''
		if (!auth.startsWith('Bearer ') || !sameToken(auth.slice('Bearer '.length), token)) {
			return send(res, 401, { error: 'missing or wrong bearer token' })
		}
		const url = new URL(req.url ?? '/', `http://${host}`)
		const method = req.method ?? 'GET'

		if (method === 'GET' && url.pathname === '/mail') {
			return send(res, 200, { messages: standIns.smtp.messages.map(mailToJson) })
		}
		if (method === 'POST' && url.pathname === '/clerk/users') {
			const body = await readJson(req)
			if (!isUserBody(body)) return send(res, 400, { error: 'expected {"id": string, "email": string, "extraEmails"?: string[]}' })
			standIns.clerkApi.setUser({
				id: body.id,
				email: body.email,
				...(body.extraEmails ? { extraEmails: body.extraEmails } : {}),
				...(body.firstName !== undefined ? { firstName: body.firstName } : {}),
				...(body.lastName !== undefined ? { lastName: body.lastName } : {}),
			})
			return send(res, 201, { id: body.id })
		}
		const userPath = /^\/clerk\/users\/([^/]+)$/.exec(url.pathname)
		if (method === 'DELETE' && userPath) {
			standIns.clerkApi.deleteUser(decodeURIComponent(userPath[1] ?? ''))
			return send(res, 200, { ok: true })
		}
		if (method === 'GET' && url.pathname === '/stripe/requests') {
			const requests: ControlStripeRequest[] = standIns.stripe.requests.map(({ method: m, path, params }) => ({ method: m, path, params }))
			return send(res, 200, { requests })
		}
		if (method === 'GET' && url.pathname === '/stripe/deliveries') {
			const deliveries: ControlStripeDelivery[] = standIns.stripe.deliveries.map((d) => ({
				eventId: d.event.id,
				type: d.event.type,
				objectId: typeof d.event.data.object.id === 'string' ? d.event.data.object.id : null,
				customer: typeof d.event.data.object.customer === 'string' ? d.event.data.object.customer : null,
				status: d.status,
				error: d.error ?? null,
			}))
			return send(res, 200, { deliveries })
		}
		return send(res, 404, { error: `no route ${method} ${url.pathname}` })
	}

	const server = http.createServer((req, res) => {
		handle(req, res).catch((error: unknown) => {
			const status = (error as { status?: number }).status ?? 500
			if (!res.headersSent) send(res, status, { error: String((error as Error).message ?? error) })
			else res.destroy()
		})
	})
	const { port, sockets } = await listenOnLoopback(server)
	host = `127.0.0.1:${port}`
	let closing: Promise<void> | undefined
	return {
		url: `http://${host}`,
		token,
		close() {
			closing ??= new Promise<void>((resolve) => {
				server.close(() => resolve())
				for (const socket of sockets) socket.destroy()
			})
			return closing
		},
	}
}
