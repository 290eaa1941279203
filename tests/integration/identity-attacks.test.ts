import fs from 'node:fs'
import http from 'node:http'
import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { cookieSuffix, createClerkTestKeys, sessionCookie } from '../mocks/clerk.ts'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { until } from '../support/deadline.ts'
import { postJson } from '../support/http.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'

// Every forged or unusable session is a JSON 401, decided without any call to the identity provider.
let standIns: StandIns
let app: RunningApp

beforeAll(async () => {
	standIns = await startStandIns()
	app = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env })
})
afterAll(async () => {
	await app?.stop()
	await standIns?.close()
})
// Refused tokens are what this file sends: the app notes each reason once a minute (auth.server.ts).
// Made-up handshake nonces too (handshake-nonce.server.ts): counted, and said a minute after the first
// note, in whichever test then runs on this server.
beforeEach(() => expectServerLog(/^auth: \d+ session token\(s\) refused \(/, /^auth: Clerk handshakes since the last note: /))

const now = () => Math.floor(Date.now() / 1000)
const victim = newClerkUserId()

function tampered(token: string) {
	const [header, payload, signature] = token.split('.')
	const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString())
	claims.sub = 'user_admin'
	return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`
}

const attacks: Array<[string, () => Record<string, string>]> = [
	[
		'expired',
		() => ({
			Cookie: sessionCookie(standIns.clerk.sign({ sub: victim, exp: now() - 60, iat: now() - 700, nbf: now() - 700 }), {
				clientUat: now() - 700,
			}),
		}),
	],
	['not yet valid', () => ({ Cookie: sessionCookie(standIns.clerk.sign({ sub: victim, nbf: now() + 600 })) })],
	['alg none', () => ({ Cookie: sessionCookie(standIns.clerk.sign({ sub: victim }, { alg: 'none' })) })],
	['HS256 keyed with the public key', () => ({ Cookie: sessionCookie(standIns.clerk.sign({ sub: victim }, { alg: 'HS256' })) })],
	[
		'signed with another key',
		() => ({
			Cookie: sessionCookie(
				standIns.clerk.sign({ sub: victim }, { privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey }),
			),
		}),
	],
	['tampered payload', () => ({ Cookie: sessionCookie(tampered(standIns.clerk.sign({ sub: victim }))) })],
	['missing sub', () => ({ Cookie: sessionCookie(standIns.clerk.sign({ sub: undefined })) })],
	['missing exp', () => ({ Cookie: sessionCookie(standIns.clerk.sign({ sub: victim, exp: undefined })) })],
	['garbage', () => ({ Cookie: '__session=not.a.jwt; __client_uat=1' })],
	['__session without __client_uat', () => ({ Cookie: `__session=${standIns.clerk.sign({ sub: victim })}` })],
	// A token the identity provider issued for another site (its azp): browsers' tokens always name one.
	['issued for another site', () => ({ Cookie: sessionCookie(standIns.clerk.sign({ sub: victim, azp: 'https://evil.example' })) })],
	['bearer with a forged token', () => ({ Authorization: `Bearer ${tampered(standIns.clerk.sign({ sub: victim }))}` })],
]

describe.each([
	['GET', '/api/billing/status'],
	['POST', '/api/billing/checkout'],
	['POST', '/api/billing/portal'],
	['POST', '/api/account/delete-request'],
])('%s %s', (method, path) => {
	test.each(attacks)('%s → 401 JSON with no call to the identity provider', async (_label, headers) => {
		const calls = standIns.clerkApi.requests.length
		const response = await fetch(`${app.url}${path}`, {
			method,
			headers: { 'Content-Type': 'application/json', Accept: 'text/html', ...headers() },
			body: method === 'POST' ? JSON.stringify({ plan: 'team', confirmEmail: 'a@b.test' }) : undefined,
			redirect: 'manual',
		})
		expect(response.status).toBe(401)
		expect(await response.json()).toEqual({ error: expect.any(String), code: 'unauthorized' })
		expect(response.headers.get('set-cookie')).toBeNull()
		expect(standIns.clerkApi.requests.length).toBe(calls)
	})
})

test('a token issued for this site (its azp) is accepted', async () => {
	const response = await fetch(`${app.url}/api/billing/status`, {
		headers: { Cookie: sessionCookie(standIns.clerk.sign({ sub: newClerkUserId(), azp: app.url })) },
	})
	expect(response.status).toBe(200)
})

// Verified tokens are remembered (auth.server.ts): what is remembered must end with the token.
test("a token accepted before is refused once it has expired (past the identity provider SDK's 5 s of clock skew)", async () => {
	const expiresAt = now() + 2
	const headers = { Cookie: sessionCookie(standIns.clerk.sign({ sub: newClerkUserId(), exp: expiresAt })) }
	expect((await fetch(`${app.url}/api/billing/status`, { headers })).status).toBe(200)
	await new Promise((resolve) => setTimeout(resolve, (expiresAt + 7 - Date.now() / 1000) * 1000))
	const later = await fetch(`${app.url}/api/billing/status`, { headers })
	expect(later.status).toBe(401)
	expect(await later.json()).toMatchObject({ code: 'unauthorized' })
})

test('a valid Bearer token works like the cookie, however the scheme is spelt', async () => {
	for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
		const response = await fetch(`${app.url}/api/billing/status`, {
			headers: { Authorization: `${scheme}  ${standIns.clerk.sign({ sub: newClerkUserId() })}` },
		})
		expect(response.status, scheme).toBe(200)
	}
})

test('an Authorization header without the Bearer scheme is no credential: a forged cookie beside a valid bare token is refused, then and after', async () => {
	const holder = newClerkUserId()
	const forgedCookie = sessionCookie(tampered(standIns.clerk.sign({ sub: newClerkUserId() })))
	const bareToken = standIns.clerk.sign({ sub: holder })
	const statusWith = (headers: Record<string, string>) => fetch(`${app.url}/api/billing/status`, { headers })
	// The cookie is what the request is judged by; the bare token beside it is not read (it used to be
	// verified, and the result remembered under the forged cookie).
	expect((await statusWith({ Cookie: forgedCookie, Authorization: bareToken })).status).toBe(401)
	expect((await statusWith({ Cookie: forgedCookie })).status).toBe(401)
	expect((await statusWith({ Authorization: bareToken })).status).toBe(401)
	// Another scheme beside a valid cookie: the cookie's user, as without it.
	const cookieUser = newClerkUserId()
	const withBasic = await statusWith({
		Cookie: sessionCookie(standIns.clerk.sign({ sub: cookieUser })),
		Authorization: 'Basic dXNlcjpwYXNz',
	})
	expect(withBasic.status).toBe(200)
	expect(await withBasic.json()).toMatchObject({ plan: 'free', status: 'none' })
})

test("one user's valid session cannot read or change another user's data", async () => {
	const alice = newClerkUserId()
	const mallory = newClerkUserId()
	standIns.clerkApi.setUser({ id: alice, email: 'alice@example.com' })
	standIns.clerkApi.setUser({ id: mallory, email: 'mallory@example.com' })
	await postJson(`${app.url}/api/billing/checkout`, { plan: 'team' }, sessionHeaders(standIns.clerk, alice))
	const aliceState = await (await fetch(`${app.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, alice) })).json()
	expect(aliceState.processor_customer_id).toMatch(/^cus_/)
	// Mallory sees her own (empty) state; naming Alice anywhere in the body changes nothing.
	const malloryState = await (
		await fetch(`${app.url}/api/billing/status?user=${alice}`, { headers: sessionHeaders(standIns.clerk, mallory) })
	).json()
	expect(malloryState.processor_customer_id).toBeNull()
	const filing = await postJson(
		`${app.url}/api/account/delete-request`,
		{ confirmEmail: 'alice@example.com', userId: alice },
		sessionHeaders(standIns.clerk, mallory),
	)
	expect(filing.status).toBe(400)
	expect(await filing.json()).toMatchObject({ code: 'email-mismatch' })
})

test('a header block larger than the server accepts is still answered with JSON', async () => {
	const response = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: `__session=${'x'.repeat(40_000)}` } })
	expect(response.status).toBe(400)
	expect(response.headers.get('cache-control')).toBe('no-store')
	expect(await response.json()).toEqual({
		error: 'The request headers are too large.',
		code: 'bad-body',
		detail: expect.any(String),
		issues: [],
	})
})

test('a session remembered as verified does not outlive a sign-out (__client_uat=0) or another cookie', async () => {
	const token = standIns.clerk.sign({ sub: newClerkUserId() })
	const ok = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: sessionCookie(token) } })
	expect(ok.status).toBe(200)
	const signedOut = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: `__session=${token}; __client_uat=0` } })
	expect(signedOut.status).toBe(401)
	const tamperedAfter = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: sessionCookie(tampered(token)) } })
	expect(tamperedAfter.status).toBe(401)
})

test("a session beside a __session cookie that is no token (another application's on the domain) is still verified, whether it is a Bearer or this instance's cookie", async () => {
	const suffix = cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)
	for (const other of ['not.a.jwt', 'eyJ4IjoxfQ.eyJ4IjoxfQ.x']) {
		// A fresh token each time: a remembered one would not reach the identity SDK, where the cookie broke it.
		const bearer = await fetch(`${app.url}/api/billing/status`, {
			headers: { Authorization: `Bearer ${standIns.clerk.sign({ sub: newClerkUserId() })}`, Cookie: `__session=${other}` },
		})
		expect(bearer.status, other).toBe(200)
		const cookie = `__session_${suffix}=${standIns.clerk.sign({ sub: newClerkUserId() })}; __client_uat_${suffix}=${now() - 5}; __session=${other}`
		const cookies = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: cookie } })
		expect(cookies.status, other).toBe(200)
	}
})

test("a signed-in browser whose __session cookie another application on the domain holds with a value that is no JWT (an opaque id, JSON, dotted base64) stays signed in by this instance's suffixed session cookie, on the API and the account page", async () => {
	const suffix = cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)
	const userId = newClerkUserId()
	standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
	// Firebase Hosting forwards only a cookie named __session: another application on the domain writes
	// its own there. It replaces the unsuffixed copy the identity SDK keeps beside the suffixed one, or,
	// set on the parent domain before it, is sent first beside it.
	for (const other of ['abc123', '%7B%22uid%22%3A1%7D', '{"uid":1}', 'eyJhIjoxfQ.eyJiIjoyfQ']) {
		const token = standIns.clerk.sign({ sub: userId })
		const uat = now() - 5
		const ours = `__session_${suffix}=${token}; __client_uat_${suffix}=${uat}; __client_uat=${uat}`
		for (const cookie of [`__session=${other}; ${ours}`, `__session=${other}; __session=${token}; ${ours}`]) {
			const api = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: cookie } })
			expect(api.status, cookie).toBe(200)
			const page = await fetch(`${app.url}/account`, {
				headers: { Cookie: cookie, Accept: 'text/html', 'Sec-Fetch-Dest': 'document' },
				redirect: 'manual',
			})
			expect(page.status, cookie).toBe(200)
			expect(await page.text()).toContain('>Sign out</button>')
		}
	}
})

test("a __session cookie holding another application's JWT that names no issuer does not refuse this instance's suffixed session on the API, as it does not on the account page", async () => {
	const suffix = cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)
	const userId = newClerkUserId()
	standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
	const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
	// Another application's own HS256 session token: no issuer, no key id.
	const theirs = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ uid: 'u1', exp: now() + 3600 })}.c2lnbmF0dXJl`
	const uat = now() - 5
	const cookie = `__session=${theirs}; __session_${suffix}=${standIns.clerk.sign({ sub: userId })}; __client_uat_${suffix}=${uat}; __client_uat=${uat}`
	const page = await fetch(`${app.url}/account`, { headers: { Cookie: cookie, Accept: 'text/html' }, redirect: 'manual' })
	expect(page.status).toBe(200)
	expect(await page.text()).toContain('>Sign out</button>')
	const api = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: cookie } })
	expect(api.status).toBe(200)
	expect(await api.json()).toMatchObject({ plan: 'free', status: 'none' })
})

test('tokens that cannot even be read are counted, not logged one line per request', async () => {
	const quiet = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env })
	try {
		for (let i = 0; i < 20; i++) {
			const response = await fetch(`${quiet.url}/api/billing/status`, { headers: { Cookie: `__session=not.a.jwt${i}; __client_uat=1` } })
			expect(response.status).toBe(401)
		}
		await until(() => /token-unreadable/.test(quiet.output()), 5_000, 'the refusal in the log')
		expect(quiet.output().match(/session token\(s\) refused \(token-unreadable: [^\n]+\) since the last note/g)).toHaveLength(1)
		expect(quiet.output()).not.toContain('session verification failed')
	} finally {
		await quiet.stop()
	}
})

test('a wrong CLERK_JWT_KEY refuses every session (401) and says so in the log, once per reason, not per request', async () => {
	const wrongKey = createClerkTestKeys().jwtKeyPem
	const misconfigured = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...standIns.env, CLERK_JWT_KEY: wrongKey })
	try {
		for (let i = 0; i < 5; i++) {
			const response = await fetch(`${misconfigured.url}/api/billing/status`, { headers: sessionHeaders(standIns.clerk, newClerkUserId()) })
			expect(response.status).toBe(401)
		}
		await until(() => /session token\(s\) refused/.test(misconfigured.output()), 5_000, 'the refusal in the log')
		expect(misconfigured.output().match(/session token\(s\) refused/g)).toHaveLength(1)
	} finally {
		await misconfigured.stop()
	}
})

test('a handshake nonce on an API request asks the identity provider nothing and logs nothing: the session is verified as usual', async () => {
	const userId = newClerkUserId()
	const before = standIns.clerkApi.requests.length
	const response = await fetch(`${app.url}/api/billing/status?__clerk_handshake_nonce=made-up`, {
		headers: { Cookie: `${sessionCookie(standIns.clerk.sign({ sub: userId }))}; __clerk_handshake_nonce=made-up-too` },
	})
	expect(response.status).toBe(200)
	// Clerk resolves a nonce by asking its Backend API for the handshake's payload, and logs the failure.
	expect(standIns.clerkApi.requests.slice(before)).toEqual([])
	// A request of its own after it: its log line comes after anything the first one's handling logged.
	const marker = `/api/after-the-nonce-${randomUUID()}`
	expect((await fetch(`${app.url}${marker}`)).status).toBe(404)
	await until(() => app.output().includes(`GET ${marker} 404`), 5_000, 'the marker request in the log')
	expect(app.errorOutput()).not.toContain('handshake')
})

test('made-up handshake nonces on pages: 10 requests a minute per client are tried, the rest ignored; the log gets one note, no stacks', async () => {
	expectServerLog(/^auth: Clerk handshakes since the last note: /)
	const handshakeCalls = () => standIns.clerkApi.requests.filter((request) => request.path.includes('handshake')).length
	const before = handshakeCalls()
	const session = sessionCookie(standIns.clerk.sign({ sub: newClerkUserId() }))
	// Where Clerk finds a nonce: the query and the cookies, with names it decodes before reading them.
	const variants = [
		{ query: '?__clerk_handshake_nonce=made-up', cookie: '', hidden: false },
		{ query: '', cookie: '; __clerk_handshake_nonce=made-up', hidden: false },
		{ query: '?%5F%5Fclerk_handshake_nonce=made-up', cookie: '', hidden: false },
		{ query: '', cookie: '; %5F%5Fclerk_handshake_nonce=made-up', hidden: true },
		{ query: '', cookie: '; theme=%3B__clerk_handshake_nonce=made-up', hidden: true },
	]
	const send = (path: string, i: number) => {
		const { query, cookie } = variants[i % variants.length]!
		return fetch(`${app.url}${path}${query}`, { headers: { Cookie: `${session}${cookie}` }, redirect: 'manual' })
	}
	// Within the budget, on /sign-in: Clerk tries the nonce for the page's session check and again in the
	// root loader's rootAuthLoader, as it always did. Every variant counts against the budget.
	for (let i = 0; i < 10; i++) await (await send('/sign-in', i)).body?.cancel()
	expect(handshakeCalls() - before).toBe(20)
	// Past it, Clerk never sees the nonce, and the session cookie counts. A nonce hidden where a filter
	// would miss it takes the cookies with it: that request is signed out (to sign-in, 303).
	for (let i = 0; i < variants.length; i++) {
		const response = await send('/account', i)
		expect(response.status, `variant ${i}`).toBe(variants[i]!.hidden ? 303 : 200)
		await response.body?.cancel()
	}
	expect(handshakeCalls() - before).toBe(20)
	await until(() => /^auth: Clerk handshakes since the last note: /m.test(app.errorOutput()), 5_000, 'the note')
	const notes = app.errorOutput().match(/^auth: Clerk handshakes since the last note: .*$/gm) ?? []
	expect(notes).toHaveLength(1)
	expect(notes[0]).toMatch(/: \d+ could not be resolved \(last: Not Found\)$/)
})

test('an API request with a handshake cookie hidden behind %-escapes is refused without asking the identity provider', async () => {
	const before = standIns.clerkApi.requests.length
	const session = sessionCookie(standIns.clerk.sign({ sub: newClerkUserId() }))
	const response = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: `${session}; %5F%5Fclerk_handshake_nonce=made-up` } })
	expect(response.status).toBe(401)
	expect(await response.json()).toMatchObject({ code: 'unauthorized' })
	expect(standIns.clerkApi.requests.slice(before)).toEqual([])
	// The same session without it is verified as usual.
	expect((await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: session } })).status).toBe(200)
})

describe('refresh cookies: Clerk would trade an expired token and one for a Backend API call whose path the token names', () => {
	// Clerk's name for this instance's refresh cookie.
	const refreshCookie = () => `__refresh_${cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)}=made-up`
	const expiredClaims = () => ({ sub: victim, exp: now() - 60, iat: now() - 700, nbf: now() - 700 })
	// Anyone can write this one: its signature is junk, its sid a path of the sender's choosing.
	const madeUp = () =>
		`${standIns.clerk
			.sign({ ...expiredClaims(), sid: 'sess_victim/revoke#' })
			.split('.')
			.slice(0, 2)
			.join('.')}.AAAA`
	const genuine = () => standIns.clerk.sign(expiredClaims())
	const cookies = (token: string, refresh: string) => `${sessionCookie(token, { clientUat: now() - 700 })}; ${refresh}`
	const variants: Array<[string, () => string]> = [
		['a made-up expired token', () => cookies(madeUp(), refreshCookie())],
		['a genuine expired token', () => cookies(genuine(), refreshCookie())],
		['a made-up token, the refresh cookie %-escaped', () => cookies(madeUp(), refreshCookie().replace('__', '%5F%5F'))],
		['a made-up token, the refresh cookie inside another value', () => cookies(madeUp(), `theme=%3B${refreshCookie()}`)],
	]

	test.each(variants)('%s: the API answers 401 and pages are signed out, with no call to the identity provider', async (_label, cookie) => {
		const before = standIns.clerkApi.requests.length
		const requests: Array<[string, string, number]> = [
			['GET', '/api/billing/status', 401],
			['POST', '/api/billing/checkout', 401],
			['GET', '/pricing', 200],
			['GET', '/account', 303],
		]
		for (const [method, path, status] of requests) {
			const response = await fetch(`${app.url}${path}`, {
				method,
				headers: { Cookie: cookie(), 'Content-Type': 'application/json' },
				body: method === 'POST' ? JSON.stringify({ plan: 'team' }) : undefined,
				redirect: 'manual',
			})
			expect(response.status, `${method} ${path}`).toBe(status)
			if (path.startsWith('/api/')) expect(await response.json()).toMatchObject({ code: 'unauthorized' })
			else await response.body?.cancel()
		}
		expect(standIns.clerkApi.requests.slice(before)).toEqual([])
		expect(standIns.clerkApi.revokedSessions).not.toContain('sess_victim')
	})

	test('a valid session beside a refresh cookie stays signed in, on the API and on the account page', async () => {
		const userId = newClerkUserId()
		const cookie = `${sessionCookie(standIns.clerk.sign({ sub: userId }))}; ${refreshCookie()}`
		expect((await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: cookie } })).status).toBe(200)
		const page = await fetch(`${app.url}/account`, { headers: { Cookie: cookie }, redirect: 'manual' })
		expect(page.status).toBe(200)
		expect(await page.text()).toContain('<h1>Your account</h1>')
	})
})

test('a cookie the identity SDK cannot decode (Latin-1 from another application on the domain) does not cost a signed-in user their session', async () => {
	const session = sessionCookie(standIns.clerk.sign({ sub: newClerkUserId() }))
	for (const foreign of ['legacy=caf%E9', 'broken=%ZZ%C3']) {
		const cookie = `${foreign}; ${session}`
		const page = await fetch(`${app.url}/account`, { headers: { Cookie: cookie }, redirect: 'manual' })
		// Signed in: the account page itself, not a redirect to sign-in.
		expect(page.status, foreign).toBe(200)
		expect(await page.text()).toContain('>Sign out</button>')
		expect((await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: cookie } })).status, foreign).toBe(200)
	}
})

test("a signed-in browser's cookie jar as browsers and other applications on the domain write it stays signed in, on the API and the account page", async () => {
	const suffix = cookieSuffix(standIns.env.CLERK_PUBLISHABLE_KEY!)
	const userId = newClerkUserId()
	standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
	const uat = now() - 5
	// The identity SDK's script keeps a suffixed copy of each cookie beside the unsuffixed one.
	const jar = (token: string) => `__session=${token}; __session_${suffix}=${token}; __client_uat=${uat}; __client_uat_${suffix}=${uat}`
	const otherCookies = Array.from({ length: 150 }, (_, i) => `pref${i}=${'v'.repeat(75)}`).join('; ')
	const jars: Array<[string, (token: string) => Record<string, string>]> = [
		['no space after the separators', (token) => ({ Cookie: jar(token).replaceAll('; ', ';') })],
		['= inside other cookies’ values', (token) => ({ Cookie: `prefs=a=b==; ${jar(token)}; ab=x=y` })],
		[
			'an empty __session beside the suffixed one',
			(token) => ({ Cookie: `__session=; __session_${suffix}=${token}; __client_uat_${suffix}=${uat}` }),
		],
		['another application’s __session sent after this one', (token) => ({ Cookie: `${jar(token)}; __session=abc123` })],
		['12 KB of other cookies', (token) => ({ Cookie: `${otherCookies}; ${jar(token)}` })],
		['an empty Authorization header', (token) => ({ Cookie: jar(token), Authorization: '' })],
	]
	for (const [label, headers] of jars) {
		// A fresh token each time: a remembered one would not reach the identity SDK.
		const api = await fetch(`${app.url}/api/billing/status`, { headers: headers(standIns.clerk.sign({ sub: userId })) })
		expect(api.status, label).toBe(200)
		expect(await api.json(), label).toMatchObject({ plan: 'free', status: 'none' })
		const page = await fetch(`${app.url}/account`, {
			headers: { ...headers(standIns.clerk.sign({ sub: userId })), Accept: 'text/html', 'Sec-Fetch-Dest': 'document' },
			redirect: 'manual',
		})
		expect(page.status, label).toBe(200)
		expect(await page.text(), label).toContain('>Sign out</button>')
	}
})

test('a signed-in client sending its session with thousands of junk variants of its other cookies does not grow the server', async () => {
	const rssMb = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${app.process.pid}/status`, 'utf8'))![1]) / 1024
	const token = standIns.clerk.sign({ sub: newClerkUserId() })
	// `__client_uat` is read as an integer: "1" and 14 KB of junk is still 1, so each variant verifies.
	const junk = (i: number) => `1${String(i).padStart(6, '0')}${'x'.repeat(14_000)}`
	let sent = 0
	const sendVariants = async (count: number) => {
		for (let batch = 0; batch < count / 50; batch++) {
			const statuses = await Promise.all(
				Array.from({ length: 50 }, () =>
					fetch(`${app.url}/api/billing/status`, { headers: { Cookie: `__session=${token}; __client_uat=${junk(sent++)}` } }).then(
						async (r) => (await r.arrayBuffer(), r.status),
					),
				),
			)
			expect(new Set(statuses)).toEqual(new Set([200]))
		}
	}
	// The first round takes the heap to the size this load needs (garbage included); a second round
	// of as many new variants must not add to it. Kept per variant, 3 000 × 14 KB would be 42 MB more
	// (and the two rounds together past the 96 MB heap); what is kept per session is a digest.
	await sendVariants(3_000)
	const settled = rssMb()
	await sendVariants(3_000)
	expect(rssMb() - settled).toBeLessThan(15)
	// 6 000 requests of 14 KB each: 20-26 s on this machine.
}, 120_000)

test('tokens naming thousands of made-up key ids are refused (401), and the server lives on: the identity SDK would keep a key for each', async () => {
	let sent = 0
	// A key id of 8 KB, new for every request, in a token anyone can write (its signature is junk).
	const madeUp = () => {
		const [header, payload] = standIns.clerk.sign({ sub: victim }, { kid: `ins_${sent++}_${'k'.repeat(8_000)}` }).split('.')
		return `${header}.${payload}.AAAA`
	}
	// Kept per key id, 14 000 of them would be 112 MB, past the server's 96 MB heap: 8 000 ended it.
	for (let batch = 0; batch < 14_000 / 50; batch++) {
		const statuses = await Promise.all(
			Array.from({ length: 50 }, (_, i) =>
				fetch(`${app.url}/api/billing/status`, {
					headers: i % 2 ? { Authorization: `Bearer ${madeUp()}` } : { Cookie: sessionCookie(madeUp()) },
				}).then(async (r) => (await r.arrayBuffer(), r.status)),
			),
		)
		expect(new Set(statuses)).toEqual(new Set([401]))
	}
	// A genuine session still works.
	expect(
		(await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: sessionCookie(standIns.clerk.sign({ sub: victim })) } })).status,
	).toBe(200)
}, 120_000)

test('a token whose key id is no string at all (an object whose toString is not a function): a page is shown signed out, the API answers 401', async () => {
	const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
	const [, payload] = standIns.clerk.sign({ sub: victim }).split('.')
	const token = `${b64({ alg: 'RS256', kid: { toString: 1 } })}.${payload}.AAAA`
	const page = await fetch(`${app.url}/pricing`, { headers: { Cookie: sessionCookie(token) }, redirect: 'manual' })
	expect(page.status).toBe(200)
	await page.body?.cancel()
	const api = await fetch(`${app.url}/api/billing/status`, { headers: { Authorization: `Bearer ${token}` } })
	expect(api.status).toBe(401)
	expect(await api.json()).toMatchObject({ code: 'unauthorized' })
})

test('session cookies the identity SDK throws on (not a JWT, a payload that is no object, an issuer that is no string): pages are shown signed out, not a 500', async () => {
	const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
	const [header] = standIns.clerk.sign({ sub: victim }).split('.')
	for (const token of ['not.a.jwt', `${header}.${b64(null)}.AAAA`, `${header}.${b64({ sub: victim, iss: 5 })}.AAAA`]) {
		const cookie = `__session=${token}; __client_uat=1`
		const pricing = await fetch(`${app.url}/pricing`, { headers: { Cookie: cookie }, redirect: 'manual' })
		expect(pricing.status, token).toBe(200)
		await pricing.body?.cancel()
		const account = await fetch(`${app.url}/account`, { headers: { Cookie: cookie }, redirect: 'manual' })
		expect(account.status, token).toBe(303)
		expect(account.headers.get('location'), token).toMatch(/^\/sign-in\?/)
	}
})

test("pages' CSP lets Clerk's script and API load from the frontend-API host the publishable key names", async () => {
	const key = standIns.env.CLERK_PUBLISHABLE_KEY!
	const host = Buffer.from(key.replace(/^pk_(test|live)_/, ''), 'base64')
		.toString('utf8')
		.replace(/\$$/, '')
	const csp = (await fetch(`${app.url}/pricing`)).headers.get('content-security-policy') ?? ''
	for (const directive of ['script-src', 'connect-src']) {
		expect(csp.split(';').find((part) => part.trim().startsWith(`${directive} `))).toContain(`https://${host}`)
	}
})

test("an API write a browser sends from another site with the user's session cookie is 403 forbidden; other clients are unaffected", async () => {
	const userId = newClerkUserId()
	const session = sessionHeaders(standIns.clerk, userId)
	const portal = (headers: Record<string, string>) =>
		fetch(`${app.url}/api/billing/portal`, { method: 'POST', headers: { ...session, 'Content-Type': 'text/plain', ...headers } })
	// A form on another site (or a same-site subdomain, which the Lax cookie reaches).
	const crossSites: Array<Record<string, string>> = [
		{ Origin: 'https://evil.example' },
		{ 'Sec-Fetch-Site': 'cross-site' },
		{ 'Sec-Fetch-Site': 'same-site' },
	]
	for (const crossSite of crossSites) {
		const refused = await portal(crossSite)
		expect(refused.status, JSON.stringify(crossSite)).toBe(403)
		expect(await refused.json()).toEqual({ error: expect.any(String), code: 'forbidden' })
	}
	// Our own pages' scripts, and clients that are not browsers, get the route's own answer (no customer yet).
	const ourClients: Array<Record<string, string>> = [{ Origin: app.url }, { 'Sec-Fetch-Site': 'same-origin' }, {}]
	for (const ours of ourClients) {
		expect((await portal(ours)).status, JSON.stringify(ours)).toBe(404)
	}
	// Without the session cookie nothing is at stake: the route answers as it would anyway.
	const anonymous = await fetch(`${app.url}/api/contact`, {
		method: 'POST',
		headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' },
		body: '{}',
	})
	expect(anonymous.status).toBe(400)
})

test("behind a proxy that ends TLS, a form from the site's own https page is accepted (APP_URL not set to it); another site's is 403", async () => {
	// node:http, so the Host header is the proxy's (fetch sets it from the URL).
	const postContact = (origin: string) =>
		new Promise<number>((resolve, reject) => {
			const request = http.request(`${app.url}/contact`, {
				method: 'POST',
				headers: {
					Host: 'callsheet.example',
					Origin: origin,
					'X-Forwarded-Proto': 'https',
					'Content-Type': 'application/x-www-form-urlencoded',
				},
			})
			request.on('response', (response) => (response.resume(), resolve(response.statusCode ?? 0)))
			request.on('error', reject)
			request.end('name=&email=&subject=&message=')
		})
	// The empty form reaches the page's action: 400 with its errors, not the cross-site 403.
	expect(await postContact('https://callsheet.example')).toBe(400)
	expect(await postContact('http://callsheet.example')).toBe(400)
	for (const other of ['https://evil.example', 'https://callsheet.example.evil.example', 'https://callsheet.example:8443']) {
		expect(await postContact(other), other).toBe(403)
	}
})

test('a session remembered under cookies written oddly (spaces around the name) is not handed to a request without a session cookie', async () => {
	const token = standIns.clerk.sign({ sub: newClerkUserId() })
	const iat = Math.floor(Date.now() / 1000) - 5
	// Clerk's cookie parser trims names: this verifies as a session.
	const odd = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: ` __session =${token}; __client_uat =${iat}` } })
	expect(odd.status).toBe(200)
	for (const cookie of ['x__session=1', '__sessionx=1; other=2', 'a=__session']) {
		const response = await fetch(`${app.url}/api/billing/status`, { headers: { Cookie: cookie } })
		expect(response.status, cookie).toBe(401)
	}
})

describe('headers any client can send about the origin it reached (X-Forwarded-*, Host)', () => {
	// The identity provider's SDK builds the request's public URL from them. One no URL can hold made it
	// throw: every page 500 with a logged stack, and a valid API session read as signed out (401).
	test.each([
		{ 'X-Forwarded-Host': 'a b' },
		{ 'X-Forwarded-Host': '[::1' },
		{ 'X-Forwarded-Proto': 'ht tp' },
		// The SDK takes the first value as it is, space included: `https ` is no protocol.
		{ 'X-Forwarded-Proto': 'https ,http' },
	] as Array<Record<string, string>>)('%o is set aside: pages render, a signed-in user is signed in', async (forwarded) => {
		const userId = newClerkUserId()
		for (const path of ['/pricing', '/contact']) {
			const page = await fetch(`${app.url}${path}`, { headers: forwarded })
			expect(page.status, path).toBe(200)
		}
		const account = await fetch(`${app.url}/account`, {
			headers: { ...forwarded, ...sessionHeaders(standIns.clerk, userId) },
			redirect: 'manual',
		})
		expect(account.status).toBe(200)
		expect(await account.text()).toContain('<h1>Your account</h1>')
		const status = await fetch(`${app.url}/api/billing/status`, { headers: { ...forwarded, ...sessionHeaders(standIns.clerk, userId) } })
		expect(status.status).toBe(200)
		expect(await status.json()).toMatchObject({ plan: 'free', has_subscription: false })
	})

	test('two Host headers are one request too many (RFC 9112 §3.2): 400 JSON, for a page as for the API, a cached page too', async () => {
		const get = (path: string, hosts: string[]) =>
			new Promise<{ code: number; body: string }>((resolve, reject) => {
				const request = http.request({ host: '127.0.0.1', port: app.port, path, headers: hosts.flatMap((host) => ['Host', host]) })
				request.on('response', (response) => {
					let body = ''
					response.setEncoding('utf8')
					response.on('data', (chunk: string) => (body += chunk))
					response.on('end', () => resolve({ code: response.statusCode ?? 0, body }))
				})
				request.on('error', reject)
				request.end()
			})
		// A visitor without cookies gets /pricing from the page cache (0016), which builds no Request: the
		// same request with one Host puts the page there first (the cache is keyed by the first Host).
		expect((await get('/pricing', ['one.example'])).code).toBe(200)
		for (const path of ['/pricing', '/api/billing/status']) {
			const answer = await get(path, ['one.example', 'two.example'])
			expect(answer.code, path).toBe(400)
			expect(JSON.parse(answer.body), path).toMatchObject({ code: 'bad-body' })
		}
	})
})
