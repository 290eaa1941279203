import { json, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node'
import { Form, useActionData, useLoaderData } from '@remix-run/react'
import { useEffect, useRef } from 'react'
import { formatDate, STATUS_LABEL } from '#app/components/billing-summary.tsx'
import { listPendingDeletionRequests, markDeletionRequestProcessed } from '#app/modules/account-deletion/admin.server.ts'
import { PLAN_TABLE } from '#app/modules/billing/plans.ts'
import { requireAdmin } from '#app/utils/auth.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { readForm } from '#app/utils/forms.server.ts'
import { pageMeta } from '#app/utils/page-meta.ts'
import { usePendingSubmission } from '#app/utils/pending-submission.ts'

export const meta: MetaFunction<typeof loader> = ({ data }) => [
	...pageMeta('Deletion requests · Admin', 'Pending account deletion requests, for Callsheet administrators.', { error: data?.refused }),
	{ name: 'robots', content: 'noindex' },
]

export async function loader(args: LoaderFunctionArgs) {
	await requireAdmin(args)
	const pending = await listPendingDeletionRequests()
	return json({
		pending: pending.map((row) => ({ ...row, submittedAt: row.submittedAt.toISOString() })),
		refused: answersRefusal(args.context),
	})
}

const REFUSALS = {
	'not-found': 'That request does not exist.',
	'already-processed': 'That request was already processed.',
	'still-subscribed': 'Refused: this user still has an active, trialing or past-due subscription. Cancel it in Stripe first.',
} as const

export async function action(args: ActionFunctionArgs) {
	const adminId = await requireAdmin(args)
	const form = await readForm(args.request)
	if (form.get('intent') !== 'mark-processed')
		return recordRefusal(args.context, json({ message: 'Unknown action.', ok: false }, { status: 400 }))
	const result = await markDeletionRequestProcessed(String(form.get('requestId') ?? ''), adminId)
	if (result.status === 'ok') return json({ message: 'Marked processed.', ok: true })
	return recordRefusal(
		args.context,
		json({ message: REFUSALS[result.code], ok: false }, { status: result.code === 'not-found' ? 404 : 409 }),
	)
}

export default function DeletionRequestsAdmin() {
	const { pending } = useLoaderData<typeof loader>()
	const data = useActionData<typeof action>()
	const processing = usePendingSubmission()?.get('requestId')
	useErrorTitle(data?.ok === false)
	// The button that was pressed goes away with its row: focus the outcome instead.
	const noticeRef = useRef<HTMLParagraphElement>(null)
	useEffect(() => {
		if (data) noticeRef.current?.focus()
	}, [data])
	return (
		<div className="stack">
			<h1>Pending deletion requests</h1>
			{data ? (
				<p
					ref={noticeRef}
					className={`notice ${data.ok ? 'notice--ok' : 'notice--error'}`}
					role={data.ok ? 'status' : 'alert'}
					tabIndex={-1}
				>
					{data.message}
				</p>
			) : null}
			{pending.length === 0 ? <p>No pending requests.</p> : null}
			{pending.map((row) => (
				<section key={row.requestId} className="card stack" aria-label={`Request from ${row.clerkId}`}>
					<dl className="facts">
						<dt>User</dt>
						<dd>{row.clerkId}</dd>
						<dt>Filed</dt>
						<dd>{formatDate(row.submittedAt)}</dd>
						<dt>Subscription</dt>
						<dd>{`${PLAN_TABLE[row.subscription.plan].name} · ${STATUS_LABEL[row.subscription.status]}`}</dd>
						<dt>Stripe customer</dt>
						<dd>{row.subscription.processor_customer_id ?? 'None'}</dd>
						<dt>Reason</dt>
						<dd>{row.reason ?? '—'}</dd>
					</dl>
					<Form method="post">
						<input type="hidden" name="intent" value="mark-processed" />
						<input type="hidden" name="requestId" value={row.requestId} />
						<button className="button" type="submit" disabled={processing === row.requestId}>
							Mark processed<span className="visually-hidden">{` (request from ${row.clerkId})`}</span>
						</button>
					</Form>
				</section>
			))}
		</div>
	)
}
