import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { projectRoot } from '../support/project.ts'
import { until, within } from '../support/deadline.ts'

let app: RunningApp
let databaseUrl: string

beforeAll(async () => {
	databaseUrl = await freshDatabaseUrl()
	app = await startApp({ DATABASE_URL: databaseUrl, COMMIT_SHA: '0123456789abcdef', REGION: 'cdg' })
})
afterAll(async () => {
	await app?.stop()
})

describe('GET /api/health', () => {
	test('answers the exact payload and caching headers of the interface', async () => {
		const response = await fetch(`${app.url}/api/health`)
		expect(response.status).toBe(200)
		expect(response.headers.get('content-type')).toMatch(/^application\/json/)
		expect(response.headers.get('cache-control')).toBe('public, max-age=10, s-maxage=10')
		const body = await response.json()
		expect(Object.keys(body).sort()).toEqual(['ok', 'region', 'timestamp', 'version'])
		expect(body).toMatchObject({ ok: true, version: '0123456', region: 'cdg' })
		expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
	})

	test('without COMMIT_SHA or REGION: the commit the build was made from, and the platform region', async () => {
		const plain = await startApp({ DATABASE_URL: await freshDatabaseUrl(), FLY_REGION: 'ams' })
		try {
			const body = await (await fetch(`${plain.url}/api/health`)).json()
			expect(body.region).toBe('ams')
			const git = (...args: string[]) => execFileSync('git', args, { cwd: projectRoot, stdio: ['ignore', 'pipe', 'ignore'] })
			const inGitCheckout = (() => {
				try {
					return Boolean(git('rev-parse', 'HEAD'))
				} catch {
					return false
				}
			})()
			if (!inGitCheckout) return expect(body.version).toBe('unknown')
			// A commit of this repository (the build may be older than HEAD).
			expect(body.version).toMatch(/^[0-9a-f]{7}$/)
			expect(() => git('rev-parse', '--verify', '--quiet', `${body.version}^{commit}`)).not.toThrow()
		} finally {
			await plain.stop()
		}
	})

	test('calls within 10 seconds get the same payload', async () => {
		const health = async () => (await fetch(`${app.url}/api/health`)).text()
		let first = await health()
		// The payload is kept for 10 s from when it was made (its timestamp): start from a fresh one, so
		// both calls fall in one window whenever this test runs.
		const age = Date.now() - Date.parse(JSON.parse(first).timestamp)
		if (age > 5_000) {
			await new Promise((r) => setTimeout(r, 10_000 - age + 100))
			first = await health()
		}
		await new Promise((r) => setTimeout(r, 50))
		expect(await health()).toBe(first)
	})

	test('HEAD works and other methods get 405 JSON with Allow', async () => {
		expect((await fetch(`${app.url}/api/health`, { method: 'HEAD' })).status).toBe(200)
		const response = await fetch(`${app.url}/api/health`, { method: 'POST' })
		expect(response.status).toBe(405)
		expect(response.headers.get('allow')).toBe('GET, HEAD')
		expect(await response.json()).toMatchObject({ code: 'method-not-allowed' })
	})
})

describe('every /api/* answer is JSON', () => {
	test.each(['GET', 'POST', 'PUT', 'DELETE'])('%s to an unknown path is 404 not-found', async (method) => {
		const response = await fetch(`${app.url}/api/nope/deeper`, { method, headers: { accept: 'text/html' } })
		expect(response.status).toBe(404)
		expect(response.headers.get('content-type')).toMatch(/^application\/json/)
		expect(await response.json()).toEqual({ error: expect.any(String), code: 'not-found' })
	})
})

/** A request with any method, including those fetch refuses to send (TRACE, CONNECT). */
function rawRequest(
	method: string,
	path: string,
	headers: http.OutgoingHttpHeaders = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
	return new Promise((resolve, reject) => {
		// The path as written: a URL string would have its dot segments resolved by the client.
		const request = http.request({ host: '127.0.0.1', port: app.port, path, method, headers, agent: false }, (response) => {
			let body = ''
			response.setEncoding('utf8')
			response.on('data', (chunk) => (body += chunk))
			response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }))
		})
		request.on('error', reject)
		request.end()
	})
}

describe('request targets written unusually still reach the API, in JSON', () => {
	test("Remix's _data and index parameters cannot make an /api/* path answer another route's data", async () => {
		for (const [method, path] of [
			['GET', '/api/nope?_data=root'],
			['GET', '/api?_data=root'],
			['GET', '/api/nope?_data=routes%2Fpricing'],
			['GET', '/api/contact/x?_data=routes/account&a=1'],
			['POST', '/api/nope?_data=root'],
			// Remix reads the query and the path decoded.
			['GET', '/api/nope?%5Fdata=root'],
			['GET', '/api/nope?_dat%61=root'],
			['GET', '/%61pi/nope?_data=root'],
		] as const) {
			const response = await rawRequest(method, path, { accept: 'application/json' })
			expect(response.status, `${method} ${path}`).toBe(404)
			expect(response.headers['content-type'], `${method} ${path}`).toMatch(/^application\/json/)
			expect(JSON.parse(response.body), `${method} ${path}`).toEqual({ error: expect.any(String), code: 'not-found' })
		}
	})

	test('an absolute-form target is routed by its path', async () => {
		const absolute = (path: string) => `http://127.0.0.1:${app.port}${path}`
		const health = await rawRequest('GET', absolute('/api/health'))
		expect(health.status).toBe(200)
		expect(JSON.parse(health.body)).toMatchObject({ ok: true, version: '0123456' })
		const trace = await rawRequest('TRACE', absolute('/api/contact'))
		expect(trace.status).toBe(405)
		expect(trace.headers.allow).toBe('POST')
		expect(JSON.parse(trace.body)).toMatchObject({ code: 'method-not-allowed' })
		const page = await rawRequest('GET', absolute('/pricing'))
		expect(page.status).toBe(200)
		expect(page.body).toContain('<title>Plans and pricing')
		// Its dot segments are kept for the guard: an /api/* target never resolves to a page.
		for (const path of ['/api/../pricing', '/api/%2e%2e/pricing']) {
			const api = await rawRequest('GET', absolute(path))
			expect(api.status, path).toBe(404)
			expect(JSON.parse(api.body), path).toMatchObject({ code: 'not-found' })
		}
	})

	test('a target whose dot segments resolve into /api/ is the API: its JSON 404, never a loader called by ?_data', async () => {
		for (const path of ['/x/../api/nope?_data=root', '/x/%2e%2e/api/nope?_data=root', '/pricing/../api/nope']) {
			const api = await rawRequest('GET', path)
			expect(api.status, path).toBe(404)
			expect(api.headers['content-type'], path).toMatch(/^application\/json/)
			expect(JSON.parse(api.body), path).toMatchObject({ code: 'not-found' })
		}
	})

	test('runs of slashes (a base URL ending in /) and backslashes are one slash, never a host', async () => {
		const health = await rawRequest('GET', '//api/health')
		expect(health.status).toBe(200)
		expect(JSON.parse(health.body)).toMatchObject({ ok: true })
		const missing = await rawRequest('POST', '//api//nope', { 'content-type': 'application/json' })
		expect(missing.status).toBe(404)
		expect(JSON.parse(missing.body)).toMatchObject({ code: 'not-found' })
		const trace = await rawRequest('TRACE', '//api/contact')
		expect(trace.status).toBe(405)
		expect(trace.headers['content-type']).toMatch(/^application\/json/)
		// Read as a URL against the Host, `//evil.example/pricing` would be the pricing page of a host
		// named evil.example: it is the path /evil.example/pricing, which does not exist.
		for (const path of ['//evil.example/pricing', '/\\evil.example/pricing']) {
			const page = await rawRequest('GET', path, { accept: 'text/html' })
			expect(page.status, path).toBe(404)
			expect(page.body, path).toContain('Page not found')
		}
	})
})

describe('methods the API does not know', () => {
	test.each(['PROPFIND', 'SEARCH', 'TRACE', 'LINK'])('%s: 405 with Allow on a route, 404 elsewhere, always JSON', async (method) => {
		const onRoute = await rawRequest(method, '/api/billing/status')
		expect(onRoute.status).toBe(405)
		expect(onRoute.headers.allow).toBe('GET, HEAD')
		expect(onRoute.headers['content-type']).toMatch(/^application\/json/)
		expect(JSON.parse(onRoute.body)).toEqual({ error: expect.any(String), code: 'method-not-allowed' })

		const onContact = await rawRequest(method, '/API/Contact/')
		expect(onContact.status).toBe(405)
		expect(onContact.headers.allow).toBe('POST')

		const elsewhere = await rawRequest(method, '/api/nope')
		expect(elsewhere.status).toBe(404)
		expect(JSON.parse(elsewhere.body)).toEqual({ error: expect.any(String), code: 'not-found' })
	})

	// node:http's parser knows a fixed list of methods and refuses any other before a route could run
	// (docs/api.md, "Errors"): still JSON with the contract's code, and the connection closes.
	test('a method no HTTP parser here knows (FOO) is a malformed request: 400 bad-body JSON', async () => {
		const answer = await rawExchange('FOO /api/health HTTP/1.1\r\nHost: x\r\n\r\n')
		expect(answer.status).toBe(400)
		expect(answer.head).toMatch(/^content-type: application\/json/im)
		expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code: 'bad-body', detail: expect.any(String), issues: [] })
	})
})

/** Sends raw bytes, reads until the server closes the connection (or 5 s), and splits the answer. */
function rawExchange(bytes: string, port = app.port): Promise<{ status: number; head: string; body: string; raw: string }> {
	return new Promise((resolve, reject) => {
		const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes))
		let answer = ''
		socket.setEncoding('utf8')
		socket.on('data', (chunk: string) => (answer += chunk))
		socket.on('error', reject)
		socket.setTimeout(5_000, () => socket.destroy(new Error(`no end of answer within 5 s: ${JSON.stringify(answer)}`)))
		socket.on('end', () => {
			const [head = '', body = ''] = answer.split('\r\n\r\n')
			resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head, body, raw: answer })
		})
	})
}

describe('CONNECT (node:http hands it over as a bare socket), and methods pages do not take', () => {
	test('on an /api/* route: 405 JSON with Allow, elsewhere in /api/* 404 JSON, and the connection closes', async () => {
		const onRoute = await rawExchange('CONNECT /api/contact HTTP/1.1\r\nHost: x\r\n\r\n')
		expect(onRoute.status).toBe(405)
		expect(onRoute.head).toMatch(/^allow: POST$/im)
		expect(onRoute.head).toMatch(/^content-type: application\/json/im)
		expect(JSON.parse(onRoute.body)).toEqual({ error: expect.any(String), code: 'method-not-allowed' })
		const elsewhere = await rawExchange('CONNECT /api/nope HTTP/1.1\r\nHost: x\r\n\r\n')
		expect(elsewhere.status).toBe(404)
		expect(JSON.parse(elsewhere.body)).toEqual({ error: expect.any(String), code: 'not-found' })
	})

	// node:http hands the socket over at a CONNECT and looks after it no more: each of these crashed the
	// server or held its socket forever until the handler took care of them.
	test('a request pipelined before a CONNECT is answered, then the CONNECT; the server lives on', async () => {
		for (const earlier of ['GET /api/health', 'GET /pricing']) {
			const answer = await rawExchange(`${earlier} HTTP/1.1\r\nHost: x\r\n\r\nCONNECT /api/contact HTTP/1.1\r\nHost: x\r\n\r\n`)
			expect(answer.status, earlier).toBe(200)
			expect(
				[...answer.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]),
				earlier,
			).toEqual(['200', '405'])
		}
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
	})

	test('several requests pipelined before a CONNECT, one larger than the socket buffer, are all answered and logged, then the CONNECT', async () => {
		const assets = path.join(projectRoot, 'build', 'client', 'assets')
		const largest = fs
			.readdirSync(assets)
			.map((name) => ({ name, size: fs.statSync(path.join(assets, name)).size }))
			.sort((a, b) => b.size - a.size)[0]!
		expect(largest.size).toBeGreaterThan(200_000)
		const asset = `/assets/${largest.name}`
		const logged = app.output().length
		// A path of its own: the log is written in batches, and another test's CONNECT line may arrive late.
		const connectPath = `/api/pipelined-${Date.now()}`
		const requests = [`GET ${asset}`, 'GET /api/health', 'GET /contact', `GET ${asset}`, `CONNECT ${connectPath}`]
		const answer = await rawExchange(requests.map((line) => `${line} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''))
		expect([...answer.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1])).toEqual(['200', '200', '200', '200', '404'])
		expect(answer.raw.length).toBeGreaterThan(2 * largest.size)
		// Every request was finished with, not left counted in flight: each has its log line.
		await until(() => app.output().slice(logged).includes(`CONNECT ${connectPath} 404`), 10_000, 'the CONNECT log line')
		const lines = app.output().slice(logged)
		expect(lines.match(new RegExp(`^GET ${asset} 200 `, 'gm')), lines).toHaveLength(2)
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
	})

	test('a client that resets the connection right after its CONNECT does not take the server down', async () => {
		// A path of its own: the earlier tests' CONNECT /api/contact lines may be logged late, and one
		// of them must not stand in for one of these three.
		const connectPath = `/api/reset-${Date.now()}`
		const connects = () =>
			app
				.output()
				.split('\n')
				.filter((line) => line.startsWith(`CONNECT ${connectPath} `)).length
		const before = connects()
		for (let i = 0; i < 3; i++) {
			await new Promise<void>((resolve) => {
				const socket = net.connect(app.port, '127.0.0.1', () => {
					socket.write(`CONNECT ${connectPath} HTTP/1.1\r\nHost: x\r\n\r\n`)
					socket.resetAndDestroy()
				})
				socket.on('close', () => resolve())
				socket.on('error', () => {})
			})
		}
		// The server has handled all three (each is logged once the server is done with it) and still answers.
		await until(() => connects() >= before + 3, 5_000, 'the three CONNECTs in the log')
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
	})

	test('a client that keeps its side open after the answer is let go by the server, which then logs the request', async () => {
		// The log line is written when the server is done with the connection: here, only once the
		// server gives up on a client that never closes its side (none of node:http's timeouts apply).
		const path = `/api/held-${Date.now()}`
		const socket = net.connect({ port: app.port, host: '127.0.0.1', allowHalfOpen: true }, () =>
			socket.write(`CONNECT ${path} HTTP/1.1\r\nHost: x\r\n\r\n`),
		)
		socket.resume()
		try {
			await until(() => app.output().includes(`CONNECT ${path} 404`), 15_000, 'the server let go of the held connection')
		} finally {
			socket.destroy()
		}
	})

	// PUT, PATCH and DELETE reached a page's action as POST does (a PUT to /contact sent mail), and OPTIONS
	// was refused without Allow.
	test.each([
		'CONNECT example.com:443',
		'CONNECT /pricing',
		'TRACE /pricing',
		'PROPFIND /',
		'PUT /contact',
		'PATCH /account',
		'DELETE /pricing',
		'OPTIONS /contact',
	])('%s: a page or a proxy target gets 405 with Allow, not a 500', async (requestLine) => {
		const answer = await rawExchange(`${requestLine} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
		expect(answer.status).toBe(405)
		expect(answer.head).toMatch(/^allow: GET, HEAD, POST$/im)
		expect(answer.body).toBe('This method is not allowed here.')
	})
})

describe('requests node:http would answer on its own, without a body', () => {
	test('HTTP/1.1 without Host: 400 JSON bad-body (RFC 9112 §3.2), for a page as for the API; HTTP/1.0 may leave it out', async () => {
		for (const path of ['/pricing', '/api/contact']) {
			const answer = await rawExchange(`GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`)
			expect(answer.status, path).toBe(400)
			expect(answer.head, path).toMatch(/^content-type: application\/json/im)
			expect(JSON.parse(answer.body), path).toMatchObject({ code: 'bad-body' })
		}
		const older = await rawExchange('GET /pricing HTTP/1.0\r\n\r\n')
		expect(older.raw).toMatch(/^HTTP\/1\.1 200 /)
	})

	test('an Expect the server does not know is ignored (RFC 9110 §10.1.1): health answers 200, a page renders', async () => {
		for (const expectation of ['foo', '']) {
			const health = await rawExchange(`GET /api/health HTTP/1.1\r\nHost: x\r\nExpect: ${expectation}\r\nConnection: close\r\n\r\n`)
			expect(health.status, expectation).toBe(200)
			expect(JSON.parse(health.body)).toMatchObject({ ok: true })
			const page = await rawExchange(`GET /contact HTTP/1.1\r\nHost: x\r\nExpect: ${expectation}\r\nConnection: close\r\n\r\n`)
			expect(page.status, expectation).toBe(200)
			expect(page.head).toMatch(/^content-type: text\/html/im)
		}
	})

	test("an /api/* path holding an escaped line break is the API's JSON 404, not the HTML page", async () => {
		for (const path of ['/api/con%0Atact', '/api/%0A', '/api/x%0D', '/api/health%0a', '/api/%E2%80%A8', '/api/a%e2%80%a9b']) {
			for (const method of ['GET', 'POST']) {
				const answer = await rawExchange(`${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`)
				expect(answer.status, `${method} ${path}`).toBe(404)
				expect(JSON.parse(answer.body), `${method} ${path}`).toEqual({ error: expect.any(String), code: 'not-found' })
			}
		}
	})
})

describe('bytes node:http cannot parse, after requests it could', () => {
	const statuses = (raw: string) => [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1])

	test('stray bytes after a request that closes the connection: its answer, and no 400', async () => {
		for (const earlier of ['GET /api/health', 'GET /pricing', 'HEAD /contact']) {
			const answer = await rawExchange(`${earlier} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n\u0001\u0002 stray\r\n\r\n`)
			expect(statuses(answer.raw), earlier).toEqual(['200'])
			expect(answer.raw, earlier).not.toMatch(/malformed/)
		}
		// HTTP/1.0 closes by default.
		const old = await rawExchange('GET /pricing HTTP/1.0\r\nHost: x\r\n\r\nnot http at all\r\n\r\n')
		expect(statuses(old.raw.replace(/^HTTP\/1\.0/, 'HTTP/1.1'))).toEqual(['200'])
		expect(old.raw).toMatch(/<\/html>$/)
	})

	test('a malformed request pipelined after good ones (kept alive): their answers in order, then a 400 in JSON, then the close', async () => {
		const answer = await rawExchange(
			'GET /pricing HTTP/1.1\r\nHost: x\r\n\r\nGET /api/health HTTP/1.1\r\nHost: x\r\n\r\nNOT A REQUEST LINE\r\n\r\n',
		)
		expect(statuses(answer.raw)).toEqual(['200', '200', '400'])
		const [, last] = answer.raw.split('HTTP/1.1 400 Bad Request')
		expect(JSON.parse(last!.split('\r\n\r\n')[1]!)).toMatchObject({ error: 'The request is malformed.', code: 'bad-body' })
		expect(answer.raw.indexOf('</html>')).toBeLessThan(answer.raw.indexOf('HTTP/1.1 400'))
	})

	test.each([
		['/api/contact', 'application/json', '{"n'],
		['/contact', 'application/x-www-form-urlencoded', 'n=a'],
	])(
		'a request to %s whose own body breaks off malformed (a bad chunk size) gets the 400, and the server goes on, logging no failure',
		async (path, type, start) => {
			const logged = app.output().length
			const answer = await rawExchange(
				`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n${start}\r\nZZ\r\n\r\n`,
			)
			expect(statuses(answer.raw)).toEqual(['400'])
			await until(() => app.output().slice(logged).includes(`POST ${path} `), 5_000, 'the access log line')
			expect(app.output().slice(logged)).not.toMatch(/fail|error/i)
			expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
		},
	)

	/** The headers every API answer has (app/utils/security-headers.server.ts), on answers the server writes itself. */
	const expectSecurityHeaders = (head: string) => {
		expect(head).toMatch(/^x-content-type-options: nosniff$/im)
		expect(head).toMatch(/^x-frame-options: DENY$/im)
		expect(head).toMatch(/^content-security-policy: default-src 'self';.*frame-ancestors 'none'$/im)
	}

	test('a malformed request alone is still a 400 in JSON at once, with the security headers', async () => {
		const answer = await rawExchange('NOT A REQUEST LINE\r\n\r\n')
		expect(statuses(answer.raw)).toEqual(['400'])
		expect(answer.head).toMatch(/^content-type: application\/json/im)
		expectSecurityHeaders(answer.head)
		// A body that breaks off is answered by the server too, not by a route.
		const brokenBody = await rawExchange(
			'POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"n\r\nZZ\r\n\r\n',
		)
		expect(brokenBody.status).toBe(400)
		expectSecurityHeaders(brokenBody.head)
	})

	test('a server whose first request is malformed answers it with the security headers too', async () => {
		const fresh = await startApp({ DATABASE_URL: await freshDatabaseUrl() })
		try {
			const answer = await rawExchange('NOT A REQUEST LINE\r\n\r\n', fresh.port)
			expect(answer.status).toBe(400)
			expectSecurityHeaders(answer.head)
		} finally {
			await fresh.stop()
		}
	})
})

describe('a body refused before it was read', () => {
	test('413 arrives while the client is still sending, and the connection then serves the next request', async () => {
		const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
		const send = (method: string, path: string, body?: Buffer) =>
			new Promise<{ status: number; body: string; socket: unknown }>((resolve, reject) => {
				const request = http.request(
					`${app.url}${path}`,
					{ method, agent, headers: body ? { 'Content-Type': 'application/json' } : {} },
					(response) => {
						let text = ''
						response.setEncoding('utf8')
						response.on('data', (chunk) => (text += chunk))
						response.on('end', () => resolve({ status: response.statusCode!, body: text, socket: request.socket }))
					},
				)
				request.on('error', reject)
				request.end(body)
			})
		try {
			// 1 MiB: far more than the socket buffers hold, so the upload is still going when the 413 is sent.
			const tooLarge = await within(send('POST', '/api/contact', Buffer.alloc(1024 * 1024, 'x')), 15_000, 'the 413')
			expect(tooLarge.status).toBe(413)
			expect(JSON.parse(tooLarge.body)).toMatchObject({ code: 'payload-too-large' })
			const next = await within(send('GET', '/api/health'), 15_000, 'the next request on that connection')
			expect(next.status).toBe(200)
			expect(next.socket).toBe(tooLarge.socket)
		} finally {
			agent.destroy()
		}
	})
})

describe('a JSON body arriving in pieces', () => {
	/** Sends `head` and then each of `pieces` 50 ms apart on one raw connection; returns what came back. */
	function sendInPieces(head: string, pieces: string[], { leaveEarly = false } = {}) {
		return new Promise<string>((resolve, reject) => {
			const sendSlowly = async () => {
				socket.write(head)
				for (const piece of pieces) {
					await new Promise((r) => setTimeout(r, 50))
					socket.write(piece)
				}
				if (leaveEarly) socket.destroy()
			}
			const socket = net.connect(app.port, '127.0.0.1', () => void sendSlowly())
			let answer = ''
			socket.setEncoding('utf8')
			socket.on('data', (chunk) => {
				answer += chunk
				if (answer.includes('\r\n\r\n') && answer.endsWith('}')) socket.end()
			})
			socket.on('close', () => resolve(answer))
			socket.on('error', reject)
		})
	}
	const postHead = (length: number) =>
		`POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`

	test('a body sent in several packets is read whole before the route parses it', async () => {
		const body = JSON.stringify({ name: 'Ada', email: 'not-an-email', subject: 'Call sheet', message: 'Hello there.' })
		const pieces = [body.slice(0, 10), body.slice(10, 30), body.slice(30)]
		const answer = await within(sendInPieces(postHead(Buffer.byteLength(body)), pieces), 10_000, 'the answer')
		expect(answer).toMatch(/^HTTP\/1.1 400 /)
		// Parsed as JSON, then refused by the schema on the one bad field: so it was read whole.
		const refusal = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
		expect(refusal).toMatchObject({ code: 'bad-body', issues: [{ path: 'email', message: 'Enter a valid email address.' }] })
	})

	test('a client that leaves halfway through its body gets nothing, and the server carries on without an error', async () => {
		const logged = app.output().length
		const answer = await within(sendInPieces(postHead(1_000), ['{"name":"Ada",'], { leaveEarly: true }), 10_000, 'the close')
		expect(answer).toBe('')
		// The request is logged as nginx logs it, 499 (the log is batched), and nothing else: no failure
		// line, no mail attempt.
		await until(() => app.output().slice(logged).includes('POST /api/contact 499 '), 5_000, 'the access log line')
		expect(app.output().slice(logged)).not.toMatch(/fail|error/i)
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
	})

	test.each([
		['/api/contact', 'application/json', '{"name":"Ada",'],
		['/contact', 'application/x-www-form-urlencoded', 'name=Ada&email='],
	])('a client that leaves halfway through a chunked body to %s: the same, no failure logged', async (path, type, piece) => {
		const logged = app.output().length
		const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n`
		const chunk = `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`
		const answer = await within(sendInPieces(head, [chunk], { leaveEarly: true }), 10_000, 'the close')
		expect(answer).toBe('')
		await until(() => app.output().slice(logged).includes(`POST ${path} 499 `), 5_000, 'the access log line')
		expect(app.output().slice(logged)).not.toMatch(/fail|error/i)
		expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
	})
})

describe('API paths match as Remix matches them', () => {
	test('any case and a trailing slash reach the same route; other methods still get JSON', async () => {
		for (const path of ['/API/Billing/Status', '/api/billing/status/']) {
			const response = await fetch(`${app.url}${path}`)
			expect(response.status).toBe(401)
			expect(await response.json()).toMatchObject({ code: 'unauthorized' })
		}
		const options = await fetch(`${app.url}/api/contact`, { method: 'OPTIONS' })
		expect(options.status).toBe(405)
		expect(options.headers.get('content-type')).toMatch(/^application\/json/)
	})

	test("a cross-site form post to an API path in capitals gets the API's JSON refusal, not a page's", async () => {
		const response = await fetch(`${app.url}/API/contact`, {
			method: 'POST',
			headers: { Origin: 'https://elsewhere.example', 'Content-Type': 'application/x-www-form-urlencoded' },
			body: 'name=a',
		})
		expect(response.status).toBe(400)
		expect(await response.json()).toMatchObject({ code: 'bad-body' })
	})
})

describe('security headers', () => {
	test('are on pages, API answers and static files; no X-Powered-By', async () => {
		const home = await fetch(`${app.url}/`)
		const html = await home.text()
		for (const response of [home, await fetch(`${app.url}/api/health`), await fetch(`${app.url}/favicon.svg`)]) {
			expect(response.headers.get('x-content-type-options')).toBe('nosniff')
			expect(response.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin')
			expect(response.headers.get('x-frame-options')).toBe('DENY')
			expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
			expect(response.headers.get('cross-origin-opener-policy')).toBe('same-origin')
			expect(response.headers.get('permissions-policy')).toBe('camera=(), microphone=(), geolocation=(), payment=()')
			expect(response.headers.get('x-powered-by')).toBeNull()
			// Not over plain http (this server's APP_URL): a browser would keep it for a year for the host.
			expect(response.headers.get('strict-transport-security')).toBeNull()
		}
		// The document's inline scripts carry the nonce the CSP names.
		const nonce = home.headers.get('content-security-policy')!.match(/'nonce-([^']+)'/)![1]
		expect(html).toContain(`nonce="${nonce}"`)
	})

	test('served as https:// in production, pages, API answers and static files tell browsers to keep to https (HSTS)', async () => {
		const deployed = await startApp({ DATABASE_URL: await freshDatabaseUrl(), APP_URL: 'https://callsheet.example' })
		try {
			for (const path of ['/', '/pricing', '/api/health', '/api/no-such-endpoint', '/favicon.svg']) {
				const response = await fetch(`${deployed.url}${path}`)
				expect(response.headers.get('strict-transport-security'), path).toBe('max-age=31536000; includeSubDomains')
			}
		} finally {
			await deployed.stop()
		}
	})

	test('an unknown page path is a 404 with the not-found page', async () => {
		const response = await fetch(`${app.url}/no-such-page`)
		expect(response.status).toBe(404)
		expect(await response.text()).toContain('Page not found')
	})

	test('unknown and malformed paths (a broken %-escape) are 404s that log one access line, no stack', async () => {
		const logged = app.output().length
		for (const path of ['/no-such-page-either', '/%', '/pricing%zz', '/assets/%E0%A4%A']) {
			const response = await rawRequest('GET', path)
			expect(response.status, path).toBe(404)
			expect(response.body, path).toContain('Page not found')
		}
		// Dot segments would resolve to a page's path: an /api/* request still gets the API's JSON 404.
		for (const path of ['/api/%', '/api/%2e%2e', '/api/../pricing', '/API/%2E%2E/contact']) {
			const api = await rawRequest('GET', path)
			expect(api.status, path).toBe(404)
			expect(JSON.parse(api.body), path).toMatchObject({ code: 'not-found' })
		}
		// The server logs each request once answered; the child's log reaches us through a pipe.
		await until(() => app.output().slice(logged).includes('GET /API/%2E%2E/contact 404'), 5_000, 'the access line of the last request')
		const log = app.output().slice(logged)
		expect(log).toContain('GET /no-such-page-either 404')
		expect(log).not.toMatch(/\n\s+at |request failed|ErrorResponse/)
	})

	test('a Host header holding a path, a query or a fragment does not change the page that answers', async () => {
		for (const host of ['x/contact', 'x?/contact', 'x#/contact', 'x\\contact']) {
			const response = await rawRequest('GET', '/pricing', { host })
			expect(response.status, host).toBe(200)
			expect(response.body, host).toContain('<title>Plans and pricing · Callsheet</title>')
		}
	})

	test('a Host header no URL can hold is a 400 bad-body, not a 500 with a stack in the log', async () => {
		const logged = app.output().length
		for (const path of ['/api/billing/status', '/pricing']) {
			const response = await rawRequest('GET', path, { host: 'a b' })
			expect(response.status, path).toBe(400)
			expect(response.headers['content-type'], path).toMatch(/^application\/json/)
			expect(response.headers['cache-control'], path).toBe('no-store')
			expect(JSON.parse(response.body), path).toMatchObject({ code: 'bad-body' })
		}
		await until(() => app.output().slice(logged).includes('GET /pricing 400'), 5_000, 'the access line of the last request')
		expect(app.output().slice(logged)).not.toMatch(/\n\s+at |request failed/)
	})
})

describe('start-up', () => {
	test('a malformed value stops start-up with one clear line per problem', async () => {
		await expect(
			startApp({ DATABASE_URL: 'not a url', PORT: 'eighty', SMTP_URL: 'http://mail.example.com' }, { timeoutMs: 20_000 }),
		).rejects.toThrow(
			/exited with 1[\s\S]*PORT: must be a number[\s\S]*DATABASE_URL: must be a URL[\s\S]*SMTP_URL: must be a URL starting with smtp:\/\/ or smtps:\/\//,
		)
	})

	test('the log says which database serves, never its password, and where the rate limits are counted', async () => {
		const fresh = await freshDatabaseUrl()
		// The test cluster trusts every local connection, so a password it ignores can be given.
		const withPassword = (() => {
			if (!fresh.startsWith('postgres')) return fresh
			const url = new URL(fresh)
			url.password = 'pw-must-not-show'
			return url.href
		})()
		const started = await startApp({ DATABASE_URL: withPassword })
		try {
			const line = started.output().match(/^database: .*$/m)?.[0]
			if (fresh.startsWith('postgres')) {
				const { hostname, port, pathname } = new URL(fresh)
				expect(line).toBe(`database: PostgreSQL ${hostname}:${port}${pathname}`)
				expect(started.output()).toMatch(
					/^rate limits: counted in PostgreSQL \(the rate_limits table\), shared by every instance on this database$/m,
				)
			} else {
				expect(line).toMatch(/^database: embedded \(PGlite\) in \/.+\/pglite$/)
				expect(started.output()).toMatch(/^rate limits: counted in this process's memory \(the embedded database serves one process\)$/m)
			}
			expect(started.output()).not.toContain('pw-must-not-show')
		} finally {
			await started.stop()
		}
	})

	test('a database that refuses the connection stops start-up, naming the database', async () => {
		await expect(
			startApp({ DATABASE_URL: 'postgres://callsheet:pw-must-not-show@127.0.0.1:1/callsheet' }, { timeoutMs: 20_000 }),
		).rejects.toThrow(/exited with 1[\s\S]*Start-up failed: database \(PostgreSQL 127\.0\.0\.1:1\/callsheet\): connect ECONNREFUSED/)
	})

	test.runIf(inject('databaseKind') === 'embedded')(
		'a second server on the same embedded database refuses to start; the first keeps serving',
		async () => {
			await expect(startApp({ DATABASE_URL: databaseUrl }, { timeoutMs: 20_000 })).rejects.toThrow(/already in use by process \d+/)
			expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
		},
	)
})
