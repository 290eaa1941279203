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
	// Short lines, CRLF: a message whose fields are short goes out as plain 7bit text that reads as
	// written in the raw mail, and nothing needs encoding or rewriting on the way to the mail server.
	// (Any line over 76 characters makes nodemailer's rules pick quoted-printable for the whole part,
	// and the SMTP client turns every bare LF into CRLF.)
	const html = [
		'<!doctype html>',
		'<html>',
		'<body style="font-family:system-ui,sans-serif;line-height:1.5">',
		'<h2 style="margin:0 0 12px">New contact message</h2>',
		'<table cellpadding="4">',
		...rows.map(([label, value]) => `<tr><th align="left">${label}</th>\r\n<td>${escapeHtml(value)}</td></tr>`),
		'</table>',
		'<hr>',
		`<div style="white-space:pre-wrap">${escapeHtml(submission.message)}</div>`,
		'</body>',
		'</html>',
	].join('\r\n')
	// Escaped here too: the interface says all inputs are HTML-escaped before they go into the email
	// body, and that wins over contract.md's "an HTML part with every field HTML-escaped" (decision
	// 0024). A mail client that renders the text part as HTML cannot be handed markup either.
	// Name and subject on one line each, as in the headers: a line break typed into one cannot start a
	// line that reads as another field ("Email: …") above the message.
	const text = `New contact message\r\n\r\nName: ${escapeHtml(name)}\r\nEmail: ${escapeHtml(submission.email)}\r\nSubject: ${escapeHtml(subject)}\r\n\r\n${escapeHtml(submission.message)}\r\n`
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
