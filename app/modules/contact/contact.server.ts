import { env } from '#app/utils/env.server.ts'
import { sendMail } from '#app/utils/mailer.server.ts'
import { createRollingLimiter } from '#app/utils/rate-limit.server.ts'
import type { ContactSubmission } from '#app/utils/validation/contact.ts'
import { contactEmail } from './contact-email.server.ts'

// The contact capability: one rule set for POST /api/contact and the /contact page's action.

const CONTACT_RATE_LIMIT = { points: 5, durationSeconds: 60 }

// 5 per rolling minute per client IP (contract.md §2), shared by POST /api/contact and the page's form.
const contactLimiter = createRollingLimiter('contact', CONTACT_RATE_LIMIT)

export type ContactResult =
	{ status: 'ok' } | { status: 'error'; code: 'rate-limited'; retryAfterSeconds: number } | { status: 'error'; code: 'server-error' }

/** `submission` is already parsed with contactSchema; `clientIp` comes from clientIp(). */
export async function submitContact(submission: ContactSubmission, clientIp: string): Promise<ContactResult> {
	const limit = await contactLimiter.consume(clientIp)
	if (!limit.allowed) return { status: 'error', code: 'rate-limited', retryAfterSeconds: limit.retryAfterSeconds }
	const config = env()
	try {
		await sendMail(contactEmail(submission, { to: config.CONTACT_TO, from: config.MAIL_FROM }))
		return { status: 'ok' }
	} catch (error) {
		const { code, message, cause } = error as { code?: string; message?: string; cause?: { message?: string } }
		// An abort says why only in its cause (the deadline, mailer.server.ts).
		const reason = cause?.message ? `: ${cause.message}` : ''
		console.error(`contact: mail transport failed (${code ?? 'unknown'}): ${message}${reason}`)
		// Not the visitor's fault: the retry we invite must not count against their limit.
		await limit.refund()
		return { status: 'error', code: 'server-error' }
	}
}
