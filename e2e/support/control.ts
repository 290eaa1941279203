// Worker-side client of the control server (control-server.ts), which lives in the runner process
// next to the stand-ins. Use it to read the mail the app sent, register users at the fake Clerk
// Backend API, and inspect what the fake Stripe saw.
import type { ControlMail, ControlStripeDelivery, ControlStripeRequest } from './control-server.ts'
import { E2E_ENV } from './env.ts'

export type { ControlMail, ControlStripeDelivery, ControlStripeRequest }

function required(name: string): string {
	const value = process.env[name]
	if (!value)
		throw new Error(`${name} is not set: run the journeys through \`npx playwright test\` so the global setup starts the control server.`)
	return value
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
	const url = `${required(E2E_ENV.controlUrl)}${path}`
	const response = await fetch(url, {
		method,
		headers: {
			Authorization: `Bearer ${required(E2E_ENV.controlToken)}`,
			...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
		},
		...(body === undefined ? {} : { body: JSON.stringify(body) }),
	})
	const text = await response.text()
	if (!response.ok) throw new Error(`control server: ${method} ${path} answered ${response.status}: ${text}`)
	return JSON.parse(text) as T
}

/** Every message the SMTP sink has received in this run, oldest first. */
export async function sentMail(): Promise<ControlMail[]> {
	return (await call<{ messages: ControlMail[] }>('GET', '/mail')).messages
}

/**
 * The first message matching `predicate`, polling the sink until `timeoutMs` passes. Other tests
 * may send mail concurrently: always match on something unique to your test.
 */
export async function waitForMail(predicate: (mail: ControlMail) => boolean, timeoutMs = 5_000): Promise<ControlMail> {
	const deadline = Date.now() + timeoutMs
	for (;;) {
		const messages = await sentMail()
		const found = messages.find(predicate)
		if (found) return found
		if (Date.now() >= deadline) {
			throw new Error(`no matching email within ${timeoutMs} ms; subjects received: ${JSON.stringify(messages.map((m) => m.subject))}`)
		}
		await new Promise((resolve) => setTimeout(resolve, 100))
	}
}

export interface ClerkUserInput {
	id: string
	email: string
	extraEmails?: string[]
	firstName?: string
	lastName?: string
}

/** Registers (or replaces) a user at the fake Clerk Backend API, which the app asks for the primary email. */
export async function registerClerkUser(user: ClerkUserInput): Promise<void> {
	await call('POST', '/clerk/users', user)
}

export async function removeClerkUser(id: string): Promise<void> {
	await call('DELETE', `/clerk/users/${encodeURIComponent(id)}`)
}

/** Requests the fake Stripe API received (hosted-page requests included), oldest first. */
export async function stripeRequests(): Promise<ControlStripeRequest[]> {
	return (await call<{ requests: ControlStripeRequest[] }>('GET', '/stripe/requests')).requests
}

/** Webhook deliveries the fake Stripe made to the app, oldest first. */
export async function stripeDeliveries(): Promise<ControlStripeDelivery[]> {
	return (await call<{ deliveries: ControlStripeDelivery[] }>('GET', '/stripe/deliveries')).deliveries
}
