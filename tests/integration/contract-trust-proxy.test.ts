import crypto from 'node:crypto'
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startSmtpSink, type SmtpSink } from '../mocks/smtp.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { uniqueIp } from '../support/http.ts'

// contract.md §1 and §2: the contact limit (5 a minute) is per client IP, and the client IP is the
// socket address unless TRUST_PROXY=N says how many proxies' X-Forwarded-For entries to believe.
// Requests leave from distinct loopback addresses (127.0.0.2, 127.0.0.3, …) to be distinct sockets.
let sink: SmtpSink
beforeAll(async () => {
	sink = await startSmtpSink()
})
afterAll(async () => {
	await sink?.close()
})

const valid = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Where are my invoices?' }

type Answer = { status: number; retryAfter: string | undefined; body: Record<string, unknown> }

/** POST /api/contact from the loopback address `from`, with the given X-Forwarded-For (if any). */
function contact(app: RunningApp, subject: string, { from, forwardedFor }: { from: string; forwardedFor?: string }): Promise<Answer> {
	const payload = JSON.stringify({ ...valid, subject })
	return new Promise((resolve, reject) => {
		const request = http.request(
			{
				host: '127.0.0.1',
				port: app.port,
				path: '/api/contact',
				method: 'POST',
				localAddress: from,
				agent: false,
				headers: {
					'Content-Type': 'application/json',
					'Content-Length': Buffer.byteLength(payload),
					...(forwardedFor === undefined ? {} : { 'X-Forwarded-For': forwardedFor }),
				},
			},
			(response) => {
				let text = ''
				response.setEncoding('utf8')
				response.on('data', (chunk: string) => (text += chunk))
				response.on('end', () => {
					const retryAfter = response.headers['retry-after']
					resolve({
						status: response.statusCode ?? 0,
						retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
						body: JSON.parse(text),
					})
				})
				response.on('error', reject)
			},
		)
		request.on('error', reject)
		request.end(payload)
	})
}

function expectLimited(answer: Answer) {
	expect(answer.status).toBe(429)
	expect(answer.body).toEqual({ error: expect.any(String), code: 'rate-limited' })
	expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1)
}

/** Subjects that reached the inbox with this prefix, read once `marker` (sent last) has arrived. */
async function arrived(prefix: string, marker: string) {
	await sink.waitForMessage((m) => m.subject === `[Contact] ${marker}`)
	return sink.messages.map((m) => m.subject ?? '').filter((s) => s.startsWith(`[Contact] ${prefix}`))
}

describe.each([
	['unset (the default)', undefined],
	['0', '0'],
])('TRUST_PROXY %s: the socket address is the client', (_label, trustProxy) => {
	let app: RunningApp
	beforeAll(async () => {
		app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: sink.url, TRUST_PROXY: trustProxy })
	})
	afterAll(async () => {
		await app?.stop()
	})

	test('a new X-Forwarded-For on each request does not escape the limit; another socket address has its own', async () => {
		const run = crypto.randomUUID()
		const answers: Answer[] = []
		// One client, a fresh forwarded address each time (and once a chain of them, once none).
		const claims = [uniqueIp(), uniqueIp(), `${uniqueIp()}, ${uniqueIp()}`, undefined, uniqueIp(), uniqueIp()]
		for (const [i, forwardedFor] of claims.entries()) {
			answers.push(await contact(app, `${run} spoofer ${i}`, { from: '127.0.0.2', forwardedFor }))
		}
		expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429])
		expectLimited(answers[5]!)
		// A client at another address, naming the first one's forwarded addresses, is not limited by them.
		const other = await contact(app, `${run} other`, { from: '127.0.0.3', forwardedFor: claims[0] })
		expect(other.status).toBe(200)
		expect(other.body).toEqual({ success: true })
		expect((await arrived(`${run} spoofer`, `${run} other`)).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `[Contact] ${run} spoofer ${i}`))
	})
})

describe('TRUST_PROXY=1: the address our proxy forwarded is the client', () => {
	let app: RunningApp
	beforeAll(async () => {
		app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), SMTP_URL: sink.url, TRUST_PROXY: '1' })
	})
	afterAll(async () => {
		await app?.stop()
	})

	test('two forwarded addresses behind the same proxy are counted apart, each with its own 5', async () => {
		const run = crypto.randomUUID()
		const [first, second] = [uniqueIp(), uniqueIp()]
		const statuses = async (client: string, count: number) => {
			const answers: Answer[] = []
			for (let i = 0; i < count; i++) answers.push(await contact(app, `${run} ${client} ${i}`, { from: '127.0.0.2', forwardedFor: client }))
			return answers
		}
		const firstAnswers = await statuses(first!, 6)
		expect(firstAnswers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429])
		expectLimited(firstAnswers[5]!)
		const secondAnswers = await statuses(second!, 6)
		expect(secondAnswers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429])
		expectLimited(secondAnswers[5]!)
	})

	test('one forwarded address is one client whichever proxy connection carries it', async () => {
		const run = crypto.randomUUID()
		const client = uniqueIp()
		const statuses: number[] = []
		for (const [i, from] of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.2', '127.0.0.3', '127.0.0.4'].entries()) {
			statuses.push((await contact(app, `${run} ${i}`, { from, forwardedFor: client })).status)
		}
		expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
	})
})
