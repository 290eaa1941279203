import { z } from 'zod'
import { DELETION_REASON_MAX } from './limits.ts'

const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/

export const deletionRequestSchema = z.object({
	// Any text that is not the account's email is a mismatch (contract: bad-body only when missing).
	confirmEmail: z
		.string({
			error: (issue) =>
				issue.input === undefined || issue.input === null
					? 'Type the email address of your account.'
					: 'confirmEmail must be text: the email address of your account.',
		})
		.trim()
		.min(1, { error: 'Type the email address of your account.' }),
	// Measured after trimming, like the contact fields (zod counts characters: an emoji is one).
	reason: z
		.string({ error: 'The reason must be text.' })
		.trim()
		.max(DELETION_REASON_MAX, { error: `The reason must be at most ${DELETION_REASON_MAX.toLocaleString('en-US')} characters.` })
		// PostgreSQL text cannot hold NUL: stored, it failed as a 500 "try again" on every retry. The other
		// control characters (not tab or line breaks) are never typed, only pasted or sent by scripts.
		.refine((reason) => !CONTROL_CHARACTERS.test(reason), { error: 'The reason cannot contain control characters.' })
		.optional()
		.nullable()
		.transform((reason) => reason || null),
})

export type DeletionRequestInput = z.output<typeof deletionRequestSchema>
