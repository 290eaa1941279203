import Stripe from 'stripe'
import { env } from './env.server.ts'

let client: Stripe | undefined

/**
 * The processor's SDK, or null when STRIPE_SECRET_KEY is unset. Timeouts and retries are set on
 * purpose: a visitor waits on checkout, and the SDK's defaults (80 s, 2 retries) would hold them for
 * minutes. One retry is safe because every write carries an idempotency key.
 */
export function stripe(): Stripe | null {
	const config = env()
	if (!config.STRIPE_SECRET_KEY) return null
	if (!client) {
		const api = config.STRIPE_API_URL ? new URL(config.STRIPE_API_URL) : undefined
		client = new Stripe(config.STRIPE_SECRET_KEY, {
			maxNetworkRetries: 1,
			timeout: 5_000,
			telemetry: false,
			...(api
				? {
						host: api.hostname,
						port: Number(api.port || (api.protocol === 'https:' ? 443 : 80)),
						protocol: api.protocol.replace(':', '') as 'http' | 'https',
					}
				: {}),
		})
	}
	return client
}
