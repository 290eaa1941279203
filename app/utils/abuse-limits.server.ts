import { createLimiter } from './rate-limit.server.ts'

// Signed-in writes are limited per user (docs/decisions/0008-abuse-limits.md): generous for a person,
// tight enough that a stolen session or a runaway script cannot flood the processor, the identity
// provider or the database. Same stores as the contact limit.
export const USER_WRITE_LIMITS = {
	// Room for a client that tries every paid plan in both periods in a row (12), as a contract's
	// test suite would, and then some: the contract names no limit here.
	checkout: { points: 30, durationSeconds: 60 },
	portal: { points: 30, durationSeconds: 60 },
	// Deletion filings that ask the identity provider for the account's email (decision 0014).
	deletion: { points: 10, durationSeconds: 60 },
	// A pending request's reason changed by filing again: a write and an audit entry, no provider call.
	// Generous: the contract answers a filing again with the same request, and names no limit.
	deletionReason: { points: 60, durationSeconds: 60 },
	// Each visit to the return address from checkout reads the session at the processor.
	checkoutReturn: { points: 10, durationSeconds: 60 },
} as const

export const checkoutLimiter = createLimiter('user_checkout', USER_WRITE_LIMITS.checkout)
export const portalLimiter = createLimiter('user_portal', USER_WRITE_LIMITS.portal)
export const deletionLimiter = createLimiter('user_deletion', USER_WRITE_LIMITS.deletion)
export const deletionReasonLimiter = createLimiter('user_deletion_reason', USER_WRITE_LIMITS.deletionReason)
export const checkoutReturnLimiter = createLimiter('user_checkout_return', USER_WRITE_LIMITS.checkoutReturn)

// A page request carrying a Clerk handshake nonce makes Clerk ask its Backend API for the handshake's
// payload (and log the failure when the nonce is made up): each client may have a few traded a
// minute, so no client can spend our API quota (docs/decisions/0023-handshake-nonce-budget.md). A
// browser trades one nonce per handshake.
export const HANDSHAKE_NONCE_LIMIT = { points: 10, durationSeconds: 60 } as const

export const handshakeNoncePerClient = createLimiter('handshake_nonce_client', HANDSHAKE_NONCE_LIMIT)
