import { createClerkClient } from '@clerk/backend'
import nodemailer from 'nodemailer'
import Stripe from 'stripe'
import { expect, test } from 'vitest'
import { startStandIns } from '../mocks/serve-all.js'

test('the env it returns is enough for each real SDK', async () => {
	const standIns = await startStandIns({ appUrl: 'http://127.0.0.1:1' })
	const { env } = standIns
	try {
		expect(env.STRIPE_WEBHOOK_SECRET).toMatch(/^whsec_test_/)
		expect(env.CLERK_JWT_KEY).toContain('-----BEGIN PUBLIC KEY-----\n')

		// STRIPE_API_URL → host, port, protocol, the way the app is expected to derive them.
		const api = new URL(env.STRIPE_API_URL ?? '')
		const stripe = new Stripe(env.STRIPE_SECRET_KEY ?? '', {
			host: api.hostname,
			port: Number(api.port),
			protocol: api.protocol === 'http:' ? 'http' : 'https',
			maxNetworkRetries: 0,
			timeout: 2000,
		})
		expect((await stripe.prices.list({ lookup_keys: ['solo_month'] })).data).toHaveLength(1)

		standIns.clerkApi.setUser({ id: 'user_1', email: 'one@example.test' })
		const clerk = createClerkClient({
			secretKey: env.CLERK_SECRET_KEY ?? '',
			apiUrl: env.CLERK_API_URL ?? '',
		})
		expect((await clerk.users.getUser('user_1')).primaryEmailAddress?.emailAddress).toBe('one@example.test')

		// A bare SMTP_URL works: the sink advertises no STARTTLS, so nodemailer stays in plain text.
		await nodemailer
			.createTransport(env.SMTP_URL ?? '')
			.sendMail({ from: 'a@example.test', to: 'b@example.test', subject: 'via url', text: 'x' })
		expect((await standIns.smtp.waitForMessage()).subject).toBe('via url')
	} finally {
		await standIns.close()
	}
})
