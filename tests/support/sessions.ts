import crypto from 'node:crypto'
import { sessionCookie, type ClerkTestKeys } from '../mocks/clerk.ts'

/** A Clerk user id that no other test uses. */
export function newClerkUserId() {
	return `user_${crypto.randomBytes(8).toString('hex')}`
}

/** Request headers that carry a valid session for `userId`, as a browser's cookies would. */
export function sessionHeaders(keys: ClerkTestKeys, userId: string): Record<string, string> {
	return { Cookie: sessionCookie(keys.sign({ sub: userId })) }
}
