import { json, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node'
import { Form, useActionData, useLoaderData } from '@remix-run/react'
import { useEffect, useRef } from 'react'
import { formatDate, STATUS_LABEL } from '#app/components/billing-summary.tsx'
import {
	listPendingDeletionRequests,
	markDeletionRequestProcessed,
	processedRequestOwner,
	type ProcessResult,
} from '#app/modules/account-deletion/admin.server.ts'
import { PLAN_TABLE } from '#app/modules/billing/plans.ts'
import { requireAdmin } from '#app/utils/auth.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { readForm } from '#app/utils/forms.server.ts'
import { pageMeta } from '#app/utils/page-meta.ts'
import { usePendingSubmission } from '#app/utils/pending-submission.ts'

const PAGE_PATH = '/admin/deletion-requests'

export const meta: MetaFunction<typeof loader> = ({ data }) => [
	...pageMeta('Deletion requests · Admin', 'Pending account deletion requests, for Callsheet administrators.', { error: data?.refused }),
	{ name: 'robots', content: 'noindex' },
]

export async function loader(args: LoaderFunctionArgs) {
	await requireAdmin(args)
	// After processing, the action redirects here (Post/Redirect/Get): the outcome is read back from
	// the database, so the address alone cannot make the page claim anything.
	const processedId = new URL(args.request.url).searchParams.get('processed')
	const [pending, processedFor] = await Promise.all([
		listPendingDeletionRequests(),
		processedId ? processedRequestOwner(processedId) : null,
	])
	return json({
		pending: pending.map((row) => ({ ...row, submittedAt: row.submittedAt.toISOString() })),
		processed:
			processedId && processedFor ? { requestId: processedId, message: `Marked the request from ${processedFor} processed.` } : null,
		refused: answersRefusal(args.context),
	})
}

type Refusal = Extract<ProcessResult, { status: 'error' }>

function refusalMessage(result: Refusal) {
	if (result.code === 'not-found') return 'That request does not exist.'
	if (result.code === 'already-processed') return `The request from ${result.clerkId} was already processed.`
	return `Refused: the request from ${result.clerkId} cannot be processed while they still have an active, trialing or past-due subscription. Cancel it in Stripe first.`
}

export async function action(args: ActionFunctionArgs) {
	const adminId = await requireAdmin(args)
	const form = await readForm(args.request)
	if (form.get('intent') !== 'mark-processed') return recordRefusal(args.context, json({ message: 'Unknown action.' }, { status: 400 }))
	const requestId = String(form.get('requestId') ?? '')
	// Marking is final (the request leaves the list): the administrator says the deletion was done.
	if (form.get('confirmed') !== 'yes') {
		const message = 'Nothing was marked: tick "I have deleted this account and its data" first, once it is done.'
		return recordRefusal(args.context, json({ message }, { status: 400 }))
	}
	const result = await markDeletionRequestProcessed(requestId, adminId)
	if (result.status === 'ok') return redirect(`${PAGE_PATH}?processed=${requestId}`, 303)
	return recordRefusal(args.context, json({ message: refusalMessage(result) }, { status: result.code === 'not-found' ? 404 : 409 }))
}

export default function DeletionRequestsAdmin() {
	const { pending, processed } = useLoaderData<typeof loader>()
	const refusal = useActionData<typeof action>()
	const processing = usePendingSubmission()?.get('requestId')
	useErrorTitle(Boolean(refusal))
	// The button that was pressed goes away with its row (or the page was loaded anew): focus the
	// outcome, by autofocus without JavaScript and by this effect with it.
	const outcome = refusal ?? processed
	const noticeRef = useRef<HTMLParagraphElement>(null)
	useEffect(() => {
		if (outcome) noticeRef.current?.focus()
	}, [outcome])
	return (
		<div className="stack">
			<h1>Pending deletion requests</h1>
			{outcome ? (
				<p
					ref={noticeRef}
					className={`notice ${refusal ? 'notice--error' : 'notice--ok'}`}
					role={refusal ? 'alert' : 'status'}
					tabIndex={-1}
					autoFocus
				>
					{outcome.message}
				</p>
			) : null}
			{pending.length === 0 ? <p>No pending requests.</p> : null}
			{pending.map((row) => (
				<section key={row.requestId} className="card stack" aria-labelledby={`request-${row.requestId}`}>
					<h2 id={`request-${row.requestId}`}>{`Request from ${row.clerkId}`}</h2>
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
						{/* The user's own words, as written: their line breaks kept, not set in bold like the facts. */}
						<dd className="facts__prose">{row.reason ?? '—'}</dd>
					</dl>
					{/* Posts to the bare path: a refusal must not show under the last confirmation's address.
					    The server says what is missing (a notice that stays), not the browser's passing bubble. */}
					<Form method="post" action={PAGE_PATH} className="stack" noValidate>
						<input type="hidden" name="intent" value="mark-processed" />
						<input type="hidden" name="requestId" value={row.requestId} />
						<label className="checkbox">
							<input type="checkbox" name="confirmed" value="yes" required />
							<span>
								I have deleted this account and its data<span className="visually-hidden">{` (request from ${row.clerkId})`}</span>
							</span>
						</label>
						<button className="button" type="submit" disabled={processing === row.requestId}>
							Mark processed<span className="visually-hidden">{` (request from ${row.clerkId})`}</span>
						</button>
					</Form>
				</section>
			))}
		</div>
	)
}
