// Mints Clerk session tokens in a test worker from the key material the global setup exported
// (the stand-ins' private key lives in the runner process, so it travels as a PKCS8 PEM).
import { createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto'
import { e2eClerkKeys, type E2EClerkKeys } from './env.ts'

export interface SessionToken {
	token: string
	/** The token's iat: also the value for the `__client_uat` cookie. */
	iat: number
	sid: string
}

let cached: { keys: E2EClerkKeys; privateKey: KeyObject } | undefined

function keyMaterial() {
	if (!cached) {
		const keys = e2eClerkKeys()
		cached = { keys, privateKey: createPrivateKey(keys.privateKeyPem) }
	}
	return cached
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/**
 * An RS256 session token signed with the key whose public half is the server's CLERK_JWT_KEY.
 * `extraClaims` are merged last (pass `azp`, or override `exp` for expiry journeys).
 */
export function mintSessionToken(userId: string, extraClaims: Record<string, unknown> = {}): SessionToken {
	const { keys, privateKey } = keyMaterial()
	const now = Math.floor(Date.now() / 1000)
	const iat = now - 5
	const sid = `sess_${randomBytes(14).toString('hex')}`
	const header = { alg: 'RS256', kid: keys.kid, typ: 'JWT' }
	const payload = { sub: userId, sid, iat, nbf: iat, exp: now + 3600, iss: keys.issuer, ...extraClaims }
	const signingInput = `${b64url(header)}.${b64url(payload)}`
	const signature = sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url')
	return { token: `${signingInput}.${signature}`, iat: typeof payload.iat === 'number' ? payload.iat : iat, sid }
}
