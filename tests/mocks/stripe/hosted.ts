// Hosted pages a browser test walks through: Checkout (with a Pay button) and the customer portal.
import type http from 'node:http'
import { escapeHtml, sendHtml } from '../http-util.js'
import { makeEvent, type StripeEvent } from './events.js'
import type { StripeObject } from './objects.js'
import type { StripeStore } from './store.js'

export interface HostedDeps {
	store: StripeStore
	/** Delivers events in order to the webhook URL (if any) and waits for the answers. */
	deliver(events: StripeEvent[]): Promise<void>
}

function page(title: string, body: string): string {
	return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body>
</html>`
}

function show(res: http.ServerResponse, status: number, title: string, body: string): true {
	sendHtml(res, status, page(title, body))
	return true
}

function money(cents: unknown, currency: unknown): string {
	const amount = (Number(cents) / 100).toFixed(2)
	return `${amount} ${String(currency).toUpperCase()}`
}

function checkoutPage(session: StripeObject, store: StripeStore): string {
	const params = store.checkoutParams.get(session.id) ?? {}
	const items = Array.isArray(params.line_items) ? params.line_items : []
	const lines = items.map((item) => {
		const priceId = typeof item === 'object' && !Array.isArray(item) ? item.price : undefined
		const price = typeof priceId === 'string' ? store.get(priceId, 'price') : undefined
		const interval = (price?.recurring as { interval?: string } | null)?.interval
		const name = price?.nickname ?? price?.lookup_key ?? priceId
		return `<li>Plan: <strong>${escapeHtml(name)}</strong> — ${escapeHtml(
			money(price?.unit_amount, price?.currency),
		)}${interval ? ` / ${escapeHtml(interval)}` : ''}</li>`
	})
	const subData = params.subscription_data
	const trial = typeof subData === 'object' && !Array.isArray(subData) ? subData.trial_period_days : undefined
	const cancel = typeof session.cancel_url === 'string' ? `<p><a href="${escapeHtml(session.cancel_url)}">Cancel and go back</a></p>` : ''
	return page(
		'Fake Stripe Checkout',
		`<ul>${lines.join('')}</ul>
${typeof trial === 'string' ? `<p>Includes a free trial of ${escapeHtml(trial)} days.</p>` : ''}
<p>Customer: ${escapeHtml(session.customer ?? session.customer_email ?? 'new customer')}</p>
<form method="post" action="/checkout/${escapeHtml(session.id)}/pay"><button type="submit">Pay</button></form>
${cancel}`,
	)
}

/** Handles the hosted routes; returns false when the path is not one of them. */
export async function handleHosted(req: http.IncomingMessage, res: http.ServerResponse, path: string, deps: HostedDeps): Promise<boolean> {
	const { store } = deps
	const checkout = /^\/checkout\/([^/]+)(\/pay)?$/.exec(path)
	if (checkout) {
		const session = store.get(checkout[1] ?? '', 'checkout.session')
		if (!session) return show(res, 404, 'Checkout session not found', '<p>No such session.</p>')
		if (session.status !== 'open') {
			return show(res, 410, 'Checkout session no longer active', `<p>Status: ${escapeHtml(session.status)}</p>`)
		}
		if (!checkout[2] && req.method === 'GET') {
			sendHtml(res, 200, checkoutPage(session, store))
			return true
		}
		if (checkout[2] && req.method === 'POST') {
			const { subscription } = store.completeCheckout(session.id)
			// Stripe itself delivers asynchronously and in no guaranteed order; the fake waits so
			// tests are deterministic. Tests wanting other orders use makeEvent + deliver.
			await deps.deliver([makeEvent('checkout.session.completed', session), makeEvent('customer.subscription.created', subscription)])
			const successUrl = typeof session.success_url === 'string' ? session.success_url : undefined
			if (!successUrl) return show(res, 200, 'Payment complete', '<p>Thank you.</p>')
			res.writeHead(303, { Location: successUrl.replaceAll('{CHECKOUT_SESSION_ID}', session.id) })
			res.end()
			return true
		}
	}
	const portal = /^\/portal\/([^/]+)$/.exec(path)
	if (portal && req.method === 'GET') {
		const session = store.get(portal[1] ?? '', 'billing_portal.session')
		if (!session) return show(res, 404, 'Portal session not found', '<p>No such session.</p>')
		const back = typeof session.return_url === 'string' ? `<p><a href="${escapeHtml(session.return_url)}">Return to the app</a></p>` : ''
		return show(res, 200, 'Fake Stripe customer portal', `<p>Customer: ${escapeHtml(session.customer)}</p>\n${back}`)
	}
	return false
}
