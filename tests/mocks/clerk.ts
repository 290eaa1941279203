// Stand-in for Clerk: test signing keys, session tokens the real @clerk/backend accepts
// networklessly (via CLERK_JWT_KEY), and a fake Backend API for user look-ups.
// Facts behind the choices: /work/shared/notes/stand-ins.md
import {
	createHash,
	createHmac,
	generateKeyPairSync,
	sign as cryptoSign,
	constants as cryptoConstants,
	type JsonWebKey,
	type KeyObject,
} from 'node:crypto'
import { listen, nowSeconds, randomId, sendJson, type FaultMode } from './http-util.js'

export const CLERK_TEST_HOST = 'clerk.example.test'

export interface SignOptions {
	/** Header `alg`. `none` → empty signature; `HS*` → HMAC keyed with `hmacSecret` or, by
	 * default, the public PEM (the classic key-confusion attack); `PS*` → RSA-PSS; else RSA PKCS#1. */
	alg?: string
	/** Header `kid`; pass undefined to drop it. */
	kid?: string | undefined
	/** Sign with another RSA private key (wrong-key attacks) while keeping this kid. */
	privateKey?: KeyObject
	hmacSecret?: string | Buffer
	/** Extra header fields, merged last. */
	header?: Record<string, unknown>
}

/** Claims to mint; any claim set to undefined is removed from the token. */
export type ClaimsInput = { sub: string | undefined } & Record<string, unknown>

export interface ClerkTestKeys {
	publishableKey: string
	secretKey: string
	/** SPKI PEM with real newlines, the form CLERK_JWT_KEY expects. */
	jwtKeyPem: string
	kid: string
	issuer: string
	privateKey: KeyObject
	publicJwk: JsonWebKey & { kid: string; alg: string; use: string }
	sign(claims: ClaimsInput, opts?: SignOptions): string
}

export function createClerkTestKeys(host = CLERK_TEST_HOST): ClerkTestKeys {
	// Clerk strips a fixed 2048-bit DER prefix from CLERK_JWT_KEY: other sizes fail verification.
	const { publicKey, privateKey } = generateKeyPairSync('rsa', {
		modulusLength: 2048,
		publicExponent: 65537,
	})
	const jwtKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
	// The SDK caches keys per process by kid: a fresh kid per key pair avoids cross-test leaks.
	const kid = `ins_test_${randomId(20)}`
	const issuer = `https://${host}`
	return {
		// A live key: with pk_test_ the SDK redirects documents to a dev-browser handshake.
		publishableKey: `pk_live_${Buffer.from(`${host}$`).toString('base64')}`,
		secretKey: `sk_live_test_${randomId(32)}`,
		jwtKeyPem,
		kid,
		issuer,
		privateKey,
		publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
		sign(claims, opts = {}) {
			const now = nowSeconds()
			const payload: Record<string, unknown> = {
				iat: now - 1,
				nbf: now - 1,
				exp: now + 600,
				iss: issuer,
				sid: `sess_${randomId(27)}`,
				...claims,
			}
			const header: Record<string, unknown> = {
				alg: opts.alg ?? 'RS256',
				kid: 'kid' in opts ? opts.kid : kid,
				typ: 'JWT',
				...opts.header,
			}
			return encodeJwt(header, payload, opts.privateKey ?? privateKey, opts.hmacSecret ?? jwtKeyPem)
		},
	}
}

function b64url(value: unknown): string {
	return Buffer.from(JSON.stringify(dropUndefined(value as Record<string, unknown>))).toString('base64url')
}

function dropUndefined(obj: Record<string, unknown>): Record<string, unknown> {
	return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined))
}

function encodeJwt(
	header: Record<string, unknown>,
	payload: Record<string, unknown>,
	privateKey: KeyObject,
	hmacSecret: string | Buffer,
): string {
	const signingInput = `${b64url(header)}.${b64url(payload)}`
	const alg = String(header.alg)
	const bits = /(256|384|512)$/.exec(alg)?.[1] ?? '256'
	const hash = `sha${bits}`
	let signature: Buffer
	if (alg.toLowerCase() === 'none') {
		signature = Buffer.alloc(0)
	} else if (alg.startsWith('HS')) {
		signature = createHmac(hash, hmacSecret).update(signingInput).digest()
	} else if (alg.startsWith('PS')) {
		signature = cryptoSign(hash, Buffer.from(signingInput), {
			key: privateKey,
			padding: cryptoConstants.RSA_PKCS1_PSS_PADDING,
		})
	} else {
		signature = cryptoSign(hash, Buffer.from(signingInput), privateKey)
	}
	return `${signingInput}.${signature.toString('base64url')}`
}

/** Reads a JWT payload without verifying it (test-side convenience). */
export function decodeJwtPayload(token: string): Record<string, unknown> {
	const part = token.split('.')[1] ?? ''
	return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>
}

/**
 * Cookie header for a signed-in browser. The SDK ignores `__session` unless `__client_uat`
 * is present, non-zero and not later than the token's iat.
 */
export function sessionCookie(token: string, opts: { clientUat?: number } = {}): string {
	const iat = decodeJwtPayload(token).iat
	const clientUat = opts.clientUat ?? (typeof iat === 'number' ? iat : nowSeconds() - 10)
	return `__session=${token}; __client_uat=${clientUat}`
}

/**
 * The suffix the SDK gives this instance's cookie names (`__session_<suffix>`, `__refresh_<suffix>`):
 * the first 8 characters of the publishable key's SHA-1 in base64url, as @clerk/shared's getCookieSuffix.
 */
export function cookieSuffix(publishableKey: string): string {
	return createHash('sha1').update(publishableKey).digest('base64url').slice(0, 8)
}

export interface FakeClerkUser {
	id: string
	/** The primary address; null for an account with none (signed up with a phone number or a username). */
	email: string | null
	extraEmails?: string[]
	firstName?: string | null
	lastName?: string | null
}

export interface FakeClerkApi {
	url: string
	port: number
	requests: Array<{ method: string; path: string }>
	/** Session ids revoked through `POST /v1/sessions/:id/revoke`, in order. */
	revokedSessions: string[]
	setUser(user: FakeClerkUser): void
	deleteUser(id: string): void
	setMode(mode: FaultMode): void
	/** Answers every request `ms` later (0: at once): keeps the app's requests in flight. */
	setLatency(ms: number): void
	close(): Promise<void>
}

/**
 * A fake Clerk Backend API: `GET /v1/users/:id`, `POST /v1/sessions/:id/revoke` and `GET /v1/jwks`
 * (used by the SDK only when CLERK_JWT_KEY is unset). Pass its url as CLERK_API_URL / `apiUrl`.
 */
export async function startFakeClerkApi(opts: { secretKey: string; jwks?: JsonWebKey[] }): Promise<FakeClerkApi> {
	const users = new Map<string, Record<string, unknown>>()
	const requests: FakeClerkApi['requests'] = []
	const revokedSessions: string[] = []
	let mode: FaultMode = 'ok'
	let latencyMs = 0

	const listening = await listen(async (req, res) => {
		const url = new URL(req.url ?? '/', 'http://localhost')
		requests.push({ method: req.method ?? 'GET', path: url.pathname })
		if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs))
		if (mode === 'hang') return
		if (mode === 'reset') return void req.socket.destroy()
		if (mode === 'error500') {
			return sendJson(res, 500, clerkErrors('internal_clerk_error', 'Oops, an unexpected error occurred'))
		}
		if (req.headers.authorization !== `Bearer ${opts.secretKey}`) {
			// The code the SDK recognises as a bad secret key.
			return sendJson(res, 401, clerkErrors('clerk_key_invalid', 'The provided Clerk Secret Key is invalid.'))
		}
		if (req.method === 'GET' && url.pathname === '/v1/jwks') {
			return sendJson(res, 200, { keys: opts.jwks ?? [] })
		}
		const match = /^\/v1\/users\/([^/]+)$/.exec(url.pathname)
		if (req.method === 'GET' && match) {
			const user = users.get(decodeURIComponent(match[1] ?? ''))
			if (user) return sendJson(res, 200, user)
			return sendJson(res, 404, clerkErrors('resource_not_found', 'not found'))
		}
		const revoke = /^\/v1\/sessions\/(sess_[^/]+)\/revoke$/.exec(url.pathname)
		if (req.method === 'POST' && revoke) {
			const id = decodeURIComponent(revoke[1] ?? '')
			// A session that is no longer active cannot be revoked again. (The stand-in answers 404; the
			// app treats any 400, 404 or 410 here as "already over".)
			if (revokedSessions.includes(id)) return sendJson(res, 404, clerkErrors('resource_not_found', 'not found'))
			revokedSessions.push(id)
			return sendJson(res, 200, clerkSessionJson(id, 'revoked'))
		}
		return sendJson(res, 404, clerkErrors('resource_not_found', 'not found'))
	})

	return {
		url: listening.url,
		port: listening.port,
		requests,
		revokedSessions,
		setUser: (user) => users.set(user.id, clerkUserJson(user)),
		deleteUser: (id) => void users.delete(id),
		setMode: (next) => void (mode = next),
		setLatency: (ms) => void (latencyMs = ms),
		close: listening.close,
	}
}

/** The Backend API's session JSON (the SDK picks its class by `object`). */
function clerkSessionJson(id: string, status: string): Record<string, unknown> {
	const now = Date.now()
	return {
		object: 'session',
		id,
		client_id: `client_${randomId(27)}`,
		user_id: null,
		status,
		last_active_at: now,
		expire_at: now,
		abandon_at: now,
		created_at: now - 3_600_000,
		updated_at: now,
		last_active_organization_id: null,
		actor: null,
	}
}

function clerkErrors(code: string, message: string) {
	return {
		errors: [{ code, message, long_message: message, meta: {} }],
		clerk_trace_id: randomId(32),
	}
}

/** The Backend API's user JSON. `object: 'user'` and `linked_to: []` are required by the SDK. */
export function clerkUserJson(user: FakeClerkUser): Record<string, unknown> {
	const createdAt = Date.now() - 86_400_000
	// The primary address listed last: a user who added an address and made it primary has it after
	// the older ones, so "primary" cannot pass for "first".
	const emails = [...(user.extraEmails ?? []), ...(user.email === null ? [] : [user.email])].map((email) => ({
		id: `idn_${randomId(27)}`,
		object: 'email_address',
		email_address: email,
		reserved: false,
		verification: null,
		linked_to: [],
		created_at: createdAt,
		updated_at: createdAt,
	}))
	return {
		object: 'user',
		id: user.id,
		external_id: null,
		primary_email_address_id: user.email === null ? null : emails.at(-1)!.id,
		primary_phone_number_id: null,
		primary_web3_wallet_id: null,
		username: null,
		first_name: user.firstName ?? null,
		last_name: user.lastName ?? null,
		image_url: 'https://img.clerk.com/placeholder',
		has_image: false,
		public_metadata: {},
		private_metadata: {},
		unsafe_metadata: {},
		email_addresses: emails,
		phone_numbers: [],
		web3_wallets: [],
		external_accounts: [],
		saml_accounts: [],
		password_enabled: true,
		two_factor_enabled: false,
		totp_enabled: false,
		backup_code_enabled: false,
		banned: false,
		locked: false,
		create_organization_enabled: true,
		delete_self_enabled: true,
		legal_accepted_at: null,
		locale: null,
		last_sign_in_at: createdAt,
		last_active_at: createdAt,
		created_at: createdAt,
		updated_at: createdAt,
	}
}
