// The control server (support/control-server.ts) is test plumbing, but it listens on a port: check
// that only a caller with the token and the exact loopback Host can use it. No browser needed.
import http from 'node:http'
import { registerClerkUser, sentMail, stripeDeliveries, stripeRequests } from './support/control.ts'
import { E2E_ENV } from './support/env.ts'
import { expect, test } from './support/fixtures.ts'

function rawGet(path: string, headers: Record<string, string>): Promise<number> {
	const url = new URL(path, process.env[E2E_ENV.controlUrl])
	return new Promise((resolve, reject) => {
		const req = http.request(url, { method: 'GET', headers }, (res) => {
			res.resume()
			resolve(res.statusCode ?? 0)
		})
		req.once('error', reject)
		req.end()
	})
}

test.describe('control server', () => {
	test('listens on loopback and refuses callers without the token or with another Host', async () => {
		const url = new URL(process.env[E2E_ENV.controlUrl] ?? '')
		expect(url.hostname).toBe('127.0.0.1')
		const token = process.env[E2E_ENV.controlToken] ?? ''
		expect(await rawGet('/mail', {})).toBe(401)
		expect(await rawGet('/mail', { Authorization: 'Bearer wrong' })).toBe(401)
		expect(await rawGet('/mail', { Authorization: `Bearer ${token}`, Host: `localhost:${url.port}` })).toBe(421)
		expect(await rawGet('/mail', { Authorization: `Bearer ${token}` })).toBe(200)
	})

	test('answers the helpers and rejects a malformed user', async () => {
		expect(Array.isArray(await sentMail())).toBe(true)
		expect(Array.isArray(await stripeRequests())).toBe(true)
		expect(Array.isArray(await stripeDeliveries())).toBe(true)
		await registerClerkUser({ id: 'user_e2e_control_check', email: 'control@example.test' })
		await expect(registerClerkUser({ id: '', email: 'nobody' })).rejects.toThrow(/answered 400/)
	})
})
