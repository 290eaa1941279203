import { z } from 'zod'
import { CONTACT_LIMITS } from './limits.ts'
import { withAsciiDomain } from './email.ts'
import { asTyped } from './text.ts'

// The one contact schema, for POST /api/contact and the contact page's action alike. Client-safe (no
// server import), though the form is checked on the server only (`noValidate`: one set of messages).

/**
 * How a field is named in its messages, as the form labels it ("Your name"), and what to ask for when
 * it is empty: the message says what to do ("Enter a subject."), not what went wrong.
 */
type FieldWords = { label: string; missing: string }

const FIELD_WORDS = {
	name: { label: 'Your name', missing: 'Enter your name.' },
	email: { label: 'Email', missing: 'Enter your email address.' },
	subject: { label: 'Subject', missing: 'Enter a subject.' },
	message: { label: 'Message', missing: 'Enter your message.' },
} satisfies Record<string, FieldWords>

/** Missing (or null) asks for it; a number or an object where text belongs is named as such (the API's). */
const notText =
	({ label, missing }: FieldWords) =>
	(issue: { input?: unknown }) =>
		issue.input === undefined || issue.input === null ? missing : `${label} must be text.`

/** Surrounding whitespace is trimmed first, so a field of only spaces counts as missing. */
const text = (words: FieldWords, max: number) =>
	z
		.string({ error: notText(words) })
		.overwrite(asTyped)
		.trim()
		.min(1, { error: words.missing })
		.max(max, { error: `${words.label} must be ${max.toLocaleString('en-US')} characters or fewer.` })

/**
 * What a mail server takes beyond the address's shape (RFC 5321 §4.5.3.1, RFC 1035): a local part of
 * at most 64 octets, at most 254 in all, domain labels of at most 63 that do not end in a hyphen. A
 * longer address would be refused by the relay after the visitor's 200 was already promised.
 */
function deliverable(address: string) {
	const at = address.lastIndexOf('@')
	const labels = address.slice(at + 1).split('.')
	// A dot may not start or end the local part, nor come twice (RFC 5322's dot-atom; browsers allow it):
	// such an address would be sent quoted, two characters longer than counted here.
	const dotAtom = !/^\.|\.\.|\.@/.test(address)
	return dotAtom && at <= 64 && address.length <= 254 && labels.every((label) => label.length <= 63 && !label.endsWith('-'))
}

export const contactSchema = z.object({
	name: text(FIELD_WORDS.name, CONTACT_LIMITS.name),
	email: z
		.string({ error: notText(FIELD_WORDS.email) })
		.trim()
		.min(1, { error: FIELD_WORDS.email.missing })
		.transform(withAsciiDomain)
		// The rule browsers apply to <input type="email"> (the form's field): a dotless domain
		// (user@localhost, as the contract's own defaults), any of RFC 5322's local-part characters, and an
		// internationalised top-level domain in its ASCII form (xn--p1ai); zod's default rule refuses all three.
		.pipe(
			z
				.email({ pattern: z.regexes.html5Email, error: 'Enter a valid email address.' })
				.refine(deliverable, { error: 'Enter a valid email address.' }),
		),
	subject: text(FIELD_WORDS.subject, CONTACT_LIMITS.subject),
	message: text(FIELD_WORDS.message, CONTACT_LIMITS.message),
})

export type ContactSubmission = z.output<typeof contactSchema>

/**
 * A subject other pages suggest through `/contact?subject=…` (contactHref): prefilled, still the
 * visitor's to change. Anything that would not pass as a subject, or holds a control character (a
 * line break included: a subject is one line), is dropped: the field starts empty.
 */
export function suggestedSubject(query: URLSearchParams): string | undefined {
	const parsed = contactSchema.shape.subject.safeParse(query.get('subject'))
	return parsed.success && !/[\x00-\x1f\x7f]/.test(parsed.data) ? parsed.data : undefined
}
