// What the global setup hands to the test workers (through process.env), and how to read it back.
import { existsSync } from 'node:fs'

export const E2E_ENV = {
	/** Origin of the app under test, e.g. http://127.0.0.1:41234 (no trailing slash). */
	baseUrl: 'E2E_BASE_URL',
	/** JSON of E2EClerkKeys: what a worker needs to mint session tokens the app accepts. */
	clerkKeys: 'E2E_CLERK_KEYS',
	/** JSON of the stand-in env the server got (CLERK_*, STRIPE_*, SMTP_URL). */
	standInEnv: 'E2E_STAND_IN_ENV',
	/** Path of the server's stdout+stderr log for this run. */
	serverLog: 'E2E_SERVER_LOG',
	/** Origin of the loopback control server (support/control-server.ts), e.g. http://127.0.0.1:41235. */
	controlUrl: 'E2E_CONTROL_URL',
	/** Bearer token the control server requires. */
	controlToken: 'E2E_CONTROL_TOKEN',
} as const

/** The one Clerk user id the server gets as ADMIN_USER_IDS: `signIn(page, E2E_ADMIN_USER_ID)` for admin pages. */
export const E2E_ADMIN_USER_ID = 'user_e2e_admin'

export interface E2EClerkKeys {
	/** PKCS8 PEM of the RSA-2048 private key. */
	privateKeyPem: string
	/** SPKI PEM; the server has it as CLERK_JWT_KEY. */
	publicKeyPem: string
	kid: string
	/** `https://clerk.example.test` */
	issuer: string
	publishableKey: string
}

/** Debian's Chromium (no browser download is possible here); CHROMIUM_PATH overrides it, as in scripts/test.js. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
export const chromiumAvailable = existsSync(CHROMIUM_PATH)
export const CHROMIUM_MISSING_MESSAGE = `Chromium not found at ${CHROMIUM_PATH} (install Debian's "chromium" package, or set CHROMIUM_PATH); browser journeys are skipped.`

function required(name: string): string {
	const value = process.env[name]
	if (!value) {
		throw new Error(`${name} is not set: run the journeys through \`npx playwright test\` so the global setup starts the app.`)
	}
	return value
}

export function e2eBaseUrl(): string {
	return required(E2E_ENV.baseUrl)
}

/** Origin of the fake Stripe (hosted Checkout and portal pages live there). */
export function e2eStripeOrigin(): string {
	const env = JSON.parse(required(E2E_ENV.standInEnv)) as Record<string, string>
	const url = env.STRIPE_API_URL
	if (!url) throw new Error(`${E2E_ENV.standInEnv} has no STRIPE_API_URL`)
	return new URL(url).origin
}

export function e2eClerkKeys(): E2EClerkKeys {
	return JSON.parse(required(E2E_ENV.clerkKeys)) as E2EClerkKeys
}
