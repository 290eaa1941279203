import { json, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from '@remix-run/node'
import { Form, useActionData, useLoaderData } from '@remix-run/react'
import { useEffect, useRef, type RefObject } from 'react'
import { z } from 'zod'
import { STATUS_LABEL } from '#app/components/billing-summary.tsx'
import { ErrorPage, orErrorPageMeta } from '#app/components/error-page.tsx'
import { formatDate } from '#app/utils/format-date.ts'
import {
	closedRequestOwner,
	listPendingDeletionRequests,
	markDeletionRequestProcessed,
	withdrawDeletionRequest,
	type ProcessResult,
	type WithdrawResult,
} from '#app/modules/account-deletion/admin.server.ts'
import { PLAN_TABLE } from '#app/modules/billing/plans.ts'
import { requireAdmin } from '#app/utils/auth.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { readForm } from '#app/utils/forms.server.ts'
import { nullWhenFailed } from '#app/utils/null-when-failed.server.ts'
import { pageMeta } from '#app/utils/page-meta.ts'
import { usePendingSubmission } from '#app/utils/pending-submission.ts'
import { SubmitButton } from '#app/components/submit-button.tsx'

const PAGE_PATH = '/admin/deletion-requests'

export const meta = orErrorPageMeta<typeof loader>(({ data }) => [
	...pageMeta('Deletion requests · Admin', 'Pending account deletion requests, for Callsheet administrators.', { error: data?.refused }),
	{ name: 'robots', content: 'noindex' },
])

// Where this page's action throws, the error page is this route's, under the root's loader (see ErrorPage).
export const ErrorBoundary = ErrorPage

export async function loader(args: LoaderFunctionArgs) {
	await requireAdmin(args)
	// After processing, the action redirects here (Post/Redirect/Get): the outcome is read back from
	// the database, so the address alone cannot make the page claim anything.
	const params = new URL(args.request.url).searchParams
	const processedId = params.get('processed')
	const withdrawnId = params.get('withdrawn')
	const [pending, processedFor, withdrawnFor] = await Promise.all([
		listPendingDeletionRequests(),
		processedId ? closedRequestOwner(processedId, 'processed') : null,
		withdrawnId ? closedRequestOwner(withdrawnId, 'withdrawn') : null,
	])
	const outcome =
		processedId && processedFor
			? { message: `Marked the request from ${processedFor} processed.` }
			: withdrawnId && withdrawnFor
				? { message: `Withdrew the request from ${withdrawnFor}. Nothing was deleted; their account stays as it is.` }
				: null
	return json({
		pending: pending.map((row) => ({ ...row, submittedAt: row.submittedAt.toISOString() })),
		outcome,
		refused: answersRefusal(args.context),
	})
}

type Refusal = Extract<ProcessResult, { status: 'error' }>

function withdrawalRefusal(result: Extract<WithdrawResult, { status: 'error' }>) {
	if (result.code === 'not-found') return 'That request does not exist.'
	return `The request from ${result.clerkId} is no longer pending: it was already ${result.current}.`
}

function refusalMessage(result: Refusal) {
	if (result.code === 'not-found') return 'That request does not exist.'
	if (result.code === 'already-processed') return `The request from ${result.clerkId} was already processed.`
	if (result.code === 'withdrawn') return `The request from ${result.clerkId} was withdrawn: there is nothing to process.`
	if (result.code === 'billing-unverified')
		return `Nothing was marked: Stripe could not be asked whether it still bills ${result.clerkId}. Try again in a moment.`
	return `Refused: the request from ${result.clerkId} cannot be processed while they still have an active, trialing, past-due or incomplete subscription at Stripe. Cancel it in Stripe first.`
}

/** A box is ticked when the browser sends its value; anything else (absent, edited) is unticked. */
const ticked = z
	.string()
	.nullable()
	.transform((value) => value === 'yes')

/** One form per request card, two intents; the domain functions check the id itself (not-found). */
const adminActionSchema = z.discriminatedUnion('intent', [
	z.object({ intent: z.literal('mark-processed'), requestId: z.string(), confirmed: ticked }),
	z.object({ intent: z.literal('withdraw'), requestId: z.string(), userAsked: ticked }),
])

export async function action(args: ActionFunctionArgs) {
	const adminId = await requireAdmin(args)
	const form = await readForm(args.request)
	const parsed = adminActionSchema.safeParse({
		intent: form.get('intent'),
		requestId: form.get('requestId') ?? '',
		confirmed: form.get('confirmed'),
		userAsked: form.get('userAsked'),
	})
	if (!parsed.success) return refuse(args, 'This page was out of date. Reload it and try again.', 400)
	const submitted = parsed.data
	if (submitted.intent === 'mark-processed') {
		// Marking is final (the request leaves the list): the administrator says the deletion was done.
		if (!submitted.confirmed) return refuseUnticked(args, submitted.requestId, 'confirmed')
		const marked = await orDatabaseFailure(markDeletionRequestProcessed(submitted.requestId, adminId))
		if (!marked) return refuse(args, DATABASE_FAILED, 503)
		return answer(args, marked, `processed=${submitted.requestId}`, refusalMessage)
	}
	if (!submitted.userAsked) return refuseUnticked(args, submitted.requestId, 'userAsked')
	const withdrawn = await orDatabaseFailure(withdrawDeletionRequest(submitted.requestId, adminId))
	if (!withdrawn) return refuse(args, DATABASE_FAILED, 503)
	return answer(args, withdrawn, `withdrawn=${submitted.requestId}`, withdrawalRefusal)
}

// Each change is one transaction: when it fails, nothing was changed and it can be sent again.
const DATABASE_FAILED = 'Nothing was changed: the database did not answer. Try again in a moment.'

/** The change's answer, or null when the database failed it (logged): thrown, it was the generic error page. */
function orDatabaseFailure<T>(change: Promise<T>) {
	return nullWhenFailed(change, (message) => `account-deletion: an administrator's change failed: ${message}`)
}

/** What a refused form gets back: the notice, and for a box left unticked, whose request and which box. */
type Refused = { message: string; requestId?: string; tick?: Tick }

function refuse(args: ActionFunctionArgs, message: string, status: number) {
	return recordRefusal(args.context, json<Refused>({ message }, { status }))
}

const TICKS = {
	confirmed: {
		label: 'I have deleted this account and its data',
		refused: 'Nothing was marked',
		missing: 'Tick this once the account and its data are deleted.',
	},
	userAsked: { label: 'The user asked to keep their account', refused: 'Nothing was withdrawn', missing: 'Tick this if the user asked.' },
} as const
type Tick = keyof typeof TICKS

/** Whose request, when the page still lists it (the notice is read apart from the card it is about). */
function untickedMessage(tick: Tick, clerkId?: string) {
	const { refused, label } = TICKS[tick]
	return `${refused}${clerkId ? ` for the request from ${clerkId}` : ''}: tick "${label}" first.`
}

/** A box left unticked: said in the request's own card, above its form and beside the box. */
function refuseUnticked(args: ActionFunctionArgs, requestId: string, tick: Tick) {
	return recordRefusal(args.context, json<Refused>({ message: untickedMessage(tick), requestId, tick }, { status: 400 }))
}

/** Done: Post/Redirect/Get to a page that reads the outcome back. Refused: a notice that stays. */
function answer<Failure extends { status: 'error'; code: string }>(
	args: ActionFunctionArgs,
	result: { status: 'ok' } | Failure,
	outcome: string,
	message: (failure: Failure) => string,
) {
	if (result.status === 'ok') return redirect(`${PAGE_PATH}?${outcome}`, 303)
	const status = result.code === 'not-found' ? 404 : result.code === 'billing-unverified' ? 503 : 409
	return refuse(args, message(result as Failure), status)
}

export default function DeletionRequestsAdmin() {
	const { pending, outcome: done } = useLoaderData<typeof loader>()
	const refusal = useActionData<typeof action>()
	const processing = usePendingSubmission()?.get('requestId')
	useErrorTitle(Boolean(refusal))
	// The button that was pressed goes away with its row (or the page was loaded anew): focus the
	// outcome, by autofocus without JavaScript and by this effect with it.
	const outcome = refusal ?? done
	// The request a refusal is about, when it was a box left unticked: the notice is said in that card,
	// above the form whose box it marks, and focused there. At the top of a long list it sat far from
	// the box it meant, right above another request's box of the same name: one the administrator
	// could tick and mark instead, which cannot be undone.
	const untickedTick = refusal?.tick
	const untickedRow = untickedTick ? pending.find((row) => row.requestId === refusal?.requestId) : undefined
	const noticeRef = useRef<HTMLParagraphElement>(null)
	useEffect(() => {
		if (outcome) noticeRef.current?.focus()
	}, [outcome])
	return (
		<div className="stack">
			<h1>Pending deletion requests</h1>
			{outcome && !untickedRow ? (
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
			{/* A list, not a region per request: many landmarks would crowd out the page's own (as on /pricing). */}
			{pending.length > 0 ? (
				<ul className="requests stack" role="list">
					{pending.map((row) => (
						<li key={row.requestId} className="card stack" aria-labelledby={`request-${row.requestId}`}>
							<h2 id={`request-${row.requestId}`} className="request-title">
								Request from <span className="request-id">{row.clerkId}</span>
							</h2>
							{/* The heading names the user (their identity provider id): not said again below it. */}
							<dl className="facts">
								<dt>Reference</dt>
								<dd>{row.requestId}</dd>
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
							<ConfirmedAction
								intent="mark-processed"
								tick="confirmed"
								button="Mark processed"
								row={row}
								busy={processing === row.requestId}
								unticked={untickedRow === row && untickedTick === 'confirmed' ? noticeRef : undefined}
							/>
							{/* The account page's link to support names the request in the message's subject. */}
							{/* Kept open when its box was left unticked, so the reason shows where it applies. */}
							<details open={untickedRow === row && untickedTick === 'userAsked' ? true : undefined}>
								<summary>The user changed their mind?</summary>
								<ConfirmedAction
									intent="withdraw"
									tick="userAsked"
									button="Withdraw request"
									secondary
									row={row}
									busy={processing === row.requestId}
									unticked={untickedRow === row && untickedTick === 'userAsked' ? noticeRef : undefined}
								/>
							</details>
						</li>
					))}
				</ul>
			) : null}
		</div>
	)
}

type ConfirmedActionProps = {
	intent: 'mark-processed' | 'withdraw'
	tick: Tick
	button: string
	secondary?: boolean
	row: { requestId: string; clerkId: string }
	busy: boolean
	/** Set when the last submission of this form left its box unticked: where its notice goes, to be focused. */
	unticked?: RefObject<HTMLParagraphElement>
}

/**
 * A change to one request that the administrator confirms with a tick. Posts to the bare path: a
 * refusal must not show under the last outcome's address. The server says what is missing (a notice
 * that stays), not the browser's passing bubble. Names say whose request, for screen readers.
 */
function ConfirmedAction({ intent, tick, button, secondary = false, row, busy, unticked }: ConfirmedActionProps) {
	const whose = <span className="visually-hidden">{` (request from ${row.clerkId})`}</span>
	const errorId = `${tick}-${row.requestId}-error`
	return (
		<Form method="post" action={PAGE_PATH} className="stack" noValidate>
			{unticked ? (
				<p ref={unticked} className="notice notice--error" role="alert" tabIndex={-1} autoFocus>
					{untickedMessage(tick, row.clerkId)}
				</p>
			) : null}
			<input type="hidden" name="intent" value={intent} />
			<input type="hidden" name="requestId" value={row.requestId} />
			<label className="checkbox">
				<input
					type="checkbox"
					name={tick}
					value="yes"
					required
					aria-invalid={unticked ? true : undefined}
					aria-describedby={unticked ? errorId : undefined}
				/>
				<span>
					{TICKS[tick].label}
					{whose}
				</span>
			</label>
			{unticked ? (
				<p className="field__error" id={errorId}>
					{TICKS[tick].missing}
				</p>
			) : null}
			<SubmitButton className={secondary ? 'button button--secondary' : 'button'} busy={busy}>
				{button}
				{whose}
			</SubmitButton>
		</Form>
	)
}
