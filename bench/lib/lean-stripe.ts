import { randomUUID } from 'node:crypto'
import type http from 'node:http'
import { listen, sendJson } from '../../tests/mocks/http-util.ts'

// The benchmark's payment processor: answers the three calls checkout makes (prices.list by lookup
// key, customers.create, checkout.sessions.create) with the fields the app reads, in the shapes the
// real SDK parses, and nothing else. The test fake (tests/mocks/stripe.ts) parses every form, keeps
// every request, object and idempotency key, and validates like Stripe: ~250 µs of CPU per call in
// this process, on the 2 cores the server under test shares. It measured our checkout at 85 % of a
// core, starved rather than saturated (see docs/performance.md, "What runs"). Any other call gets
// Stripe's answer to an unknown URL, so a new call the app makes shows up as errors in the run.

export type LeanStripe = { url: string; sessionsCreated: () => number; close: () => Promise<void> }

/** Stripe's answer, with a request id as Stripe's carry. */
function answer(res: http.ServerResponse, status: number, body: unknown) {
	sendJson(res, status, body, { 'Request-Id': `req_${randomUUID().slice(0, 14)}` })
}

export async function startLeanStripe(): Promise<LeanStripe> {
	let sessions = 0
	const listening = await listen((req, res) => {
		req.resume() // the parameters are not read: the app's requests are checked by the tests
		req.on('end', () => {
			const [path = '', query = ''] = (req.url ?? '').split('?')
			const id = randomUUID().replaceAll('-', '')
			if (req.method === 'GET' && path === '/v1/prices') {
				const lookupKey = new URLSearchParams(query).get('lookup_keys[0]')
				const price = { id: `price_${lookupKey}`, object: 'price', active: true, lookup_key: lookupKey }
				return answer(res, 200, { object: 'list', url: '/v1/prices', has_more: false, data: [price] })
			}
			if (req.method === 'POST' && path === '/v1/customers') return answer(res, 200, { id: `cus_${id}`, object: 'customer' })
			if (req.method === 'POST' && path === '/v1/checkout/sessions') {
				sessions++
				const session = `cs_test_${id}`
				return answer(res, 200, { id: session, object: 'checkout.session', status: 'open', url: `${listening.url}/checkout/${session}` })
			}
			answer(res, 404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path}).` } })
		})
	})
	return { url: listening.url, sessionsCreated: () => sessions, close: () => listening.close() }
}
