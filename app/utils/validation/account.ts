import { z } from 'zod'
import { DELETION_REASON_MAX } from './limits.ts'
import { asTyped } from './text.ts'

const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

/**
 * A value that is not text can only differ from the email: a number stands as its digits, an object or
 * array as a placeholder (never serialised: a deeply nested one would overflow the stack).
 */
const asText = (value: unknown) => {
	if (value === undefined || value === null || typeof value === 'string') return value
	return typeof value === 'object' ? '[not text]' : String(value)
}

export const deletionRequestSchema = z.object({
	// The contract: bad-body only when it is missing; anything else that is not the account's email
	// (another address, a number) is a mismatch, answered by the domain.
	confirmEmail: z.preprocess(
		asText,
		z.string({ error: 'Type the email address of your account.' }).trim().min(1, { error: 'Type the email address of your account.' }),
	),
	// Measured after trimming, like the contact fields (zod counts characters: an emoji is one).
	reason: z
		.string({ error: 'The reason must be text.' })
		.overwrite(asTyped)
		.trim()
		.max(DELETION_REASON_MAX, { error: `The reason must be at most ${DELETION_REASON_MAX.toLocaleString('en-US')} characters.` })
		// PostgreSQL text cannot hold NUL (stored, it failed as a 500 "try again" on every retry), and the
		// other control characters (not tab or line breaks) are never typed, only pasted or sent by
		// scripts. The contract refuses a reason only for its length: each becomes U+FFFD, as an
		// unreadable character does, and the rest is kept.
		.transform((reason) => reason.replace(CONTROL_CHARACTERS, '\uFFFD'))
		.optional()
		.nullable()
		.transform((reason) => reason || null),
})

export type DeletionRequestInput = z.output<typeof deletionRequestSchema>
