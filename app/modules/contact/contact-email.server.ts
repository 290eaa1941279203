import type { MailContent } from '#app/utils/mail/prepared-message.server.ts'
import type { ContactSubmission } from '#app/utils/validation/contact.ts'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(value: string) {
	return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!)
}

/** Header values must be one line: a CR or LF in a name or subject must never start a new header. */
export function oneLine(value: string) {
	return value.replace(/[\r\n\u2028\u2029]+/g, ' ').trim()
}

/**
 * The same submission on the same day (UTC) is the same message: a visitor who retries after a 500
 * resends the same fields, and the mail server may already hold the first attempt (a confirmation
 * lost after the message was sent). One Message-ID for both lets the inbox keep one copy (0019).
 */
export function contactRetryKey(submission: ContactSubmission, now = new Date()) {
	const day = now.toISOString().slice(0, 10)
	return JSON.stringify(['contact', day, submission.name, submission.email, submission.subject, submission.message])
}

export function contactEmail(submission: ContactSubmission, { to, from }: { to: string; from: string }): MailContent {
	const name = oneLine(submission.name)
	const subject = oneLine(submission.subject)
	const rows: Array<[string, string]> = [
		['Name', submission.name],
		['Email', submission.email],
		['Subject', submission.subject],
	]
	const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">
<h2 style="margin:0 0 12px">New contact message</h2>
<table cellpadding="4">${rows.map(([label, value]) => `<tr><th align="left">${label}</th><td>${escapeHtml(value)}</td></tr>`).join('')}</table>
<hr><div style="white-space:pre-wrap">${escapeHtml(submission.message)}</div>
</body></html>`
	// Escaped here too: the interface says all inputs are HTML-escaped before they go into the email
	// body, and that wins over contract.md's "an HTML part with every field HTML-escaped" (decision
	// 0024). A mail client that renders the text part as HTML cannot be handed markup either.
	const text = `New contact message\n\nName: ${escapeHtml(submission.name)}\nEmail: ${escapeHtml(submission.email)}\nSubject: ${escapeHtml(submission.subject)}\n\n${escapeHtml(submission.message)}\n`
	return {
		to,
		from,
		replyTo: { name, address: submission.email },
		subject: `[Contact] ${subject}`,
		text,
		html,
		retryKey: contactRetryKey(submission),
	}
}
