import { z } from 'zod'
import { DELETION_REASON_MAX } from './limits.ts'

export { DELETION_REASON_MAX }


export const deletionRequestSchema = z.object({
	confirmEmail: z
		.string({ error: 'Type the email address of your account.' })
		.trim()
		.min(1, { error: 'Type the email address of your account.' })
		.max(320, { error: 'That is longer than any email address.' }),
	reason: z
		.string({ error: 'The reason must be text.' })
		.max(DELETION_REASON_MAX, { error: `The reason must be at most ${DELETION_REASON_MAX} characters.` })
		.optional()
		.nullable()
		.transform((reason) => (reason?.trim() ? reason.trim() : null)),
})

export type DeletionRequestInput = z.output<typeof deletionRequestSchema>
