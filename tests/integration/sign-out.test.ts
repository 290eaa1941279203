import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { sessionCookie } from '../mocks/clerk.ts'
import { startStandIns, type StandIns } from '../mocks/serve-all.ts'
import { startApp, type RunningApp } from '../support/app-server.ts'
import { freshDatabaseUrl } from '../support/database.ts'
import { postForm } from '../support/http.ts'
import { newClerkUserId } from '../support/sessions.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'

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

/** A signed-in browser's cookies, with the session id its token names. */
function signedIn() {
	const userId = newClerkUserId()
	standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
	const token = standIns.clerk.sign({ sub: userId })
	const sessionId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sid as string
	// A suffixed copy, as Clerk also writes them, and a cookie that is not Clerk's.
	const cookie = `${sessionCookie(token)}; __client_uat_Abc123=1; theme=dark`
	return { cookie, sessionId }
}

/** The account page's Sign out, posted from `origin` (this site unless given). */
const signOut = (cookie: string, origin = app.url) => postForm(`${app.url}/sign-out`, {}, { Cookie: cookie, Origin: origin })

describe('signing out', () => {
	test('revokes the session at the identity provider, expires its cookies here, and lands on the home page', async () => {
		const { cookie, sessionId } = signedIn()
		const response = await signOut(cookie)
		expect(response.status).toBe(303)
		expect(response.headers.get('location')).toBe('/')
		expect(standIns.clerkApi.revokedSessions).toContain(sessionId)
		const expired = response.headers.getSetCookie()
		expect(expired.map((line) => line.split('=')[0]).sort()).toEqual(['__client_uat', '__client_uat_Abc123', '__session'])
		for (const line of expired) expect(line).toMatch(/=; Path=\/; Max-Age=0; SameSite=Lax$/)
		// The browser, without those cookies, is signed out.
		const home = await (await fetch(`${app.url}/`, { headers: { Cookie: 'theme=dark' } })).text()
		expect(home).toContain('>Sign in<')
	})

	test('a second sign-out of the same session (another tab, a double click) still signs the browser out', async () => {
		const { cookie, sessionId } = signedIn()
		expect((await signOut(cookie)).status).toBe(303)
		// The token still verifies for its last seconds; Clerk no longer has the session to revoke.
		const again = await signOut(cookie)
		expect(again.status).toBe(303)
		expect(again.headers.get('location')).toBe('/')
		expect(again.headers.getSetCookie()).toHaveLength(3)
		expect(standIns.clerkApi.revokedSessions.filter((id) => id === sessionId)).toHaveLength(1)
	})

	test('the account page offers it, with and without JavaScript (a plain form to /sign-out)', async () => {
		const { cookie } = signedIn()
		const page = await (await fetch(`${app.url}/account`, { headers: { Cookie: cookie } })).text()
		expect(page).toMatch(/<form method="post" action="\/sign-out"[^>]*><button type="submit"[^>]*>Sign out<\/button><\/form>/)
	})

	test('when the identity provider fails, nothing is expired and the page says the user is still signed in', async () => {
		expectServerLog(/^sign-out: revoking session \S+ failed: /)
		const { cookie, sessionId } = signedIn()
		standIns.clerkApi.setMode('error500')
		try {
			const response = await signOut(cookie)
			expect(response.status).toBe(503)
			expect(response.headers.getSetCookie()).toEqual([])
			const html = await response.text()
			expect(html).toContain('We could not sign you out just now, so you are still signed in.')
			expect(html).toContain('<title>Error: Sign out · Callsheet</title>')
		} finally {
			standIns.clerkApi.setMode('ok')
		}
		expect(standIns.clerkApi.revokedSessions).not.toContain(sessionId)
	})

	test('another site cannot sign anyone out, and a GET never does', async () => {
		const { cookie, sessionId } = signedIn()
		const crossSite = await signOut(cookie, 'https://evil.example')
		expect(crossSite.status).toBe(403)
		const opened = await fetch(`${app.url}/sign-out`, { headers: { Cookie: cookie }, redirect: 'manual' })
		expect(opened.status).toBe(200)
		expect(await opened.text()).toContain('Sign out of Callsheet on this browser?')
		expect(standIns.clerkApi.revokedSessions).not.toContain(sessionId)
	})

	test('a visitor who is not signed in is sent home', async () => {
		const opened = await fetch(`${app.url}/sign-out`, { redirect: 'manual' })
		expect(opened.status).toBe(303)
		expect(opened.headers.get('location')).toBe('/')
		const posted = await postForm(`${app.url}/sign-out`, {}, { Origin: app.url })
		expect(posted.status).toBe(303)
		expect(posted.headers.getSetCookie()).toEqual([])
	})
})
