import { Form } from '@remix-run/react'
import { useEffect, useRef, useState } from 'react'
import { DELETION_REASON_MAX } from '#app/utils/validation/limits.ts'
import { formatDate } from './billing-summary.tsx'
import { TextAreaField, TextField } from './field.tsx'

type Props = {
	pending: { requestId: string; submittedAt: string } | null
	errors: Record<string, string>
	values: Record<string, string>
	busy: boolean
}

export function DeletionRequestSection({ pending, errors, values, busy }: Props) {
	const [reasonLength, setReasonLength] = useState((values.reason ?? '').length)
	const formRef = useRef<HTMLFormElement>(null)
	// After a refused submit, focus the field to fix, as the contact form does.
	useEffect(() => {
		const field = errors.confirmEmail ? 'confirmEmail' : errors.reason ? 'reason' : null
		const target = field ? formRef.current?.elements.namedItem(field) : null
		if (target instanceof HTMLElement) target.focus()
	}, [errors])
	return (
		<section className="card stack danger" aria-labelledby="deletion-heading">
			<h2 id="deletion-heading">Delete your account</h2>
			{pending ? (
				<p className="notice notice--ok" role="status">
					You asked for your account to be deleted on {formatDate(pending.submittedAt)}. A person on our team will process it once your
					billing has settled; we will email you when it is done. (Reference {pending.requestId})
				</p>
			) : (
				<>
					<p>
						This files a request; nothing is deleted right away. A person on our team reviews it after any subscription has ended and
						payments are settled, then deletes your account and its data. Cancel your subscription in Manage billing first.
					</p>
					<Form method="post" noValidate ref={formRef} className="stack" aria-label="Request account deletion">
						<input type="hidden" name="intent" value="delete-request" />
						<TextField
							name="confirmEmail"
							label="Type your account's email address to confirm"
							type="email"
							autoComplete="off"
							required
							defaultValue={values.confirmEmail}
							error={errors.confirmEmail}
						/>
						<TextAreaField
							name="reason"
							label="Why are you leaving? (optional)"
							rows={4}
							maxLength={DELETION_REASON_MAX}
							defaultValue={values.reason}
							error={errors.reason}
							hint={`${reasonLength} of ${DELETION_REASON_MAX} characters`}
							onChange={(event) => setReasonLength(event.currentTarget.value.length)}
						/>
						<div>
							<button className="button button--danger" type="submit" disabled={busy}>
								Request account deletion
							</button>
						</div>
					</Form>
				</>
			)}
		</section>
	)
}
