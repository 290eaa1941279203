import { Form } from '@remix-run/react'
import { useEffect, useRef } from 'react'
import { keepAccountHref } from '#app/utils/contact-href.ts'
import { DELETION_REASON_MAX } from '#app/utils/validation/limits.ts'
import { formatDate } from '#app/utils/format-date.ts'
import { EmailAddress } from './email-address.tsx'
import { ErrorSummary } from './error-summary.tsx'
import { CountedTextAreaField, TextField } from './field.tsx'
import { SubmitButton } from '#app/components/submit-button.tsx'

const FIELDS = ['confirmEmail', 'reason'] as const

type Props = {
	/** The primary email the request must be confirmed with, when the identity provider told us. */
	accountEmail: string | null
	pending: { requestId: string; submittedAt: string } | null
	/** The page is the confirmation of a request just filed: its notice takes focus (autofocus without JavaScript). */
	justFiled: boolean
	/** The user has a live subscription: an administrator processes the request only once it has ended. */
	billingToSettle: boolean
	/** That subscription still renews: the user is asked to cancel it first (not when it already ends at the period's end). */
	subscriptionToCancel: boolean
	/** The plan could not be read just now: whether there is one to cancel is not known, so the call is kept, hedged. */
	billingUnknown: boolean
	errors: Record<string, string>
	values: Record<string, string>
	busy: boolean
	/** Where the form posts: the page's own path, without the query it may be shown with. */
	action: string
}

export function DeletionRequestSection({
	accountEmail,
	pending,
	justFiled,
	billingToSettle,
	subscriptionToCancel,
	billingUnknown,
	errors,
	values,
	busy,
	action,
}: Props) {
	// Filed with JavaScript, the form (and the button that had focus) gives way to the notice: focus it.
	// Not when the page loads with a request already pending.
	const noticeRef = useRef<HTMLDivElement>(null)
	const wasPending = useRef(Boolean(pending))
	useEffect(() => {
		if (pending && !wasPending.current) noticeRef.current?.focus()
		wasPending.current = Boolean(pending)
	}, [pending])
	return (
		<section className="card stack danger" aria-labelledby="deletion-heading">
			<h2 id="deletion-heading">Delete your account</h2>
			{pending ? (
				<div ref={noticeRef} className="notice notice--ok stack" role="status" tabIndex={-1} autoFocus={justFiled}>
					<p>
						You asked for your account to be deleted on {formatDate(pending.submittedAt)}.{' '}
						{/* Only a live subscription holds the request (admin.server.ts); a customer record alone does not. */}
						{`A person on our team will process it${billingToSettle ? ' once your billing has settled' : ''}; we will email you when it is done.`}{' '}
						(Reference {pending.requestId})
					</p>
					{/* Filing cancels nothing: a subscription that still renews goes on being billed, and holds the request. */}
					{subscriptionToCancel ? (
						<p>
							Your subscription still renews and is billed until you cancel it: cancel it in Manage billing so that we can delete your
							account.
						</p>
					) : null}
					<p>
						{/* The link fills in a subject naming the request: nothing to copy. */}
						Changed your mind? <a href={keepAccountHref(pending.requestId)}>Contact support</a> before then to withdraw the request.
					</p>
				</div>
			) : (
				<>
					<p>
						This files a request; nothing is deleted right away. A person on our team reviews it after any subscription has ended and
						payments are settled, then deletes your account and its data.
						{/* Not said to someone who only opened checkout, nor to someone whose subscription already ends. */}
						{subscriptionToCancel
							? ' Cancel your subscription in Manage billing first.'
							: billingUnknown
								? ' If you have a subscription, cancel it in Manage billing first.'
								: null}
					</p>
					<ErrorSummary errors={errors} fields={FIELDS} headingLevel={3} />
					<Form method="post" action={action} noValidate className="stack" aria-label="Request account deletion">
						<input type="hidden" name="intent" value="delete-request" />
						<TextField
							name="confirmEmail"
							label="Type your account's email address to confirm"
							type="email"
							autoComplete="email"
							required
							defaultValue={values.confirmEmail}
							error={errors.confirmEmail}
							hint={
								accountEmail ? (
									<>
										Your account's email address is <EmailAddress address={accountEmail} />.
									</>
								) : undefined
							}
						/>
						<CountedTextAreaField
							name="reason"
							label="Why are you leaving? (optional)"
							rows={4}
							maxLength={DELETION_REASON_MAX}
							defaultValue={values.reason}
							error={errors.reason}
						/>
						<div>
							<SubmitButton className="button button--danger" busy={busy}>
								Request account deletion
							</SubmitButton>
						</div>
					</Form>
				</>
			)}
		</section>
	)
}
