import { z } from 'zod'
import { CONTACT_LIMITS } from './limits.ts'

// Client-safe: the contact form's browser-side checks and the server use this one schema.

/** Surrounding whitespace is trimmed first, so a field of only spaces counts as missing. */
const text = (label: string, max: number) =>
	z
		.string({ error: `${label} is required.` })
		.trim()
		.min(1, { error: `${label} is required.` })
		.max(max, { error: `${label} must be at most ${max} characters.` })

export const contactSchema = z.object({
	name: text('Name', CONTACT_LIMITS.name),
	email: z
		.string({ error: 'Email is required.' })
		.trim()
		.min(1, { error: 'Email is required.' })
		.pipe(z.email({ error: 'Enter a valid email address.' })),
	subject: text('Subject', CONTACT_LIMITS.subject),
	message: text('Message', CONTACT_LIMITS.message),
})

export type ContactSubmission = z.output<typeof contactSchema>
