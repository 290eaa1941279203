// Starts every stand-in at once and hands back the environment an app process needs to use them
// (integration setup, Playwright global setup). Importable only: Node 20 cannot run .ts directly.
import { createClerkTestKeys, startFakeClerkApi, type ClerkTestKeys, type FakeClerkApi } from './clerk.js'
import { startSmtpSink, type SmtpSink } from './smtp.js'
import { startFakeStripe, type FakeStripe } from './stripe.js'

export interface StandIns {
	clerk: ClerkTestKeys
	clerkApi: FakeClerkApi
	stripe: FakeStripe
	smtp: SmtpSink
	env: Record<string, string>
	close(): Promise<void>
}

// The account's keys: the app runs on the test one; a test that switches it to live uses the other.
const STRIPE_TEST_KEY = 'sk_test_fake'
export const STRIPE_LIVE_KEY = 'sk_live_fake'

export async function startStandIns(opts: { appUrl?: string } = {}): Promise<StandIns> {
	const clerk = createClerkTestKeys()
	const started: Array<{ close(): Promise<void> }> = []
	try {
		const clerkApi = await startFakeClerkApi({
			secretKey: clerk.secretKey,
			jwks: [clerk.publicJwk],
		})
		started.push(clerkApi)
		// With appUrl, hosted-checkout payments post their events to `${appUrl}/api/billing/webhook`.
		// Only the account's keys are taken, as at Stripe: a client given another secret gets its 401.
		const stripe = await startFakeStripe({ secretKey: [STRIPE_TEST_KEY, STRIPE_LIVE_KEY], ...(opts.appUrl ? { appUrl: opts.appUrl } : {}) })
		started.push(stripe)
		const smtp = await startSmtpSink()
		started.push(smtp)
		return {
			clerk,
			clerkApi,
			stripe,
			smtp,
			env: {
				CLERK_PUBLISHABLE_KEY: clerk.publishableKey,
				CLERK_SECRET_KEY: clerk.secretKey,
				CLERK_JWT_KEY: clerk.jwtKeyPem,
				CLERK_API_URL: clerkApi.url,
				STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
				STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
				STRIPE_API_URL: stripe.url,
				SMTP_URL: smtp.url,
			},
			close: () => closeAll(started),
		}
	} catch (error) {
		await closeAll(started)
		throw error
	}
}

async function closeAll(servers: Array<{ close(): Promise<void> }>): Promise<void> {
	await Promise.allSettled(servers.map((s) => s.close()))
}
