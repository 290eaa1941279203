import { json, redirect, type ActionFunctionArgs, type HeadersFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node'
import { useActionData, useLoaderData } from '@remix-run/react'
import { AlertNotice } from '#app/components/alert-notice.tsx'
import { BillingSummary } from '#app/components/billing-summary.tsx'
import { DeletionRequestSection } from '#app/components/deletion-request-form.tsx'
import { fileDeletionRequest, pendingDeletionRequest } from '#app/modules/account-deletion/deletion.server.ts'
import { noticeInit, portalFromForm } from '#app/modules/billing/billing-page.server.ts'
import { settleCheckoutReturn } from '#app/modules/billing/checkout-return.server.ts'
import { billingOverview } from '#app/modules/billing/status.server.ts'
import { requirePageUser, signInUrl } from '#app/utils/auth.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { fieldErrors, formValues, readForm } from '#app/utils/forms.server.ts'
import { pageMeta } from '#app/utils/page-meta.ts'
import { usePendingSubmission } from '#app/utils/pending-submission.ts'
import { passRetryAfter, waitInWords } from '#app/utils/retry-after.ts'
import { deletionRequestSchema } from '#app/utils/validation/account.ts'

// The page's forms post here, never to the address they are shown at: /account?checkout=success&…
// would settle the checkout again and thank the user again above an error.
const ACCOUNT_PATH = '/account'

// Where a filed deletion request lands (Post/Redirect/Get, as the contact page does): reloading the
// confirmation asks for the page again instead of posting the form again.
const DELETION_REQUESTED_PATH = '/account?deletion=requested'

export const meta: MetaFunction<typeof loader> = ({ data }) =>
	data?.deletionRequested
		? pageMeta(
				'Deletion requested · Your account',
				'Your request to delete your Callsheet account was received; we email you when it is done.',
			)
		: pageMeta('Your account', 'Your Callsheet plan and billing, and how to ask for your account to be deleted.', { error: data?.refused })

export const headers: HeadersFunction = passRetryAfter

export async function loader(args: LoaderFunctionArgs) {
	const user = await requirePageUser(args)
	const url = new URL(args.request.url)
	const sessionId = url.searchParams.get('session_id')
	const returnedFromCheckout = url.searchParams.get('checkout') === 'success'
	if (returnedFromCheckout && sessionId) await settleCheckoutReturn(user, sessionId)
	const [overview, pending] = await Promise.all([billingOverview(user.clerkId), pendingDeletionRequest(user.id).catch(() => null)])
	return json({
		returnedFromCheckout,
		state: overview.state,
		cancelAtPeriodEnd: overview.cancelAtPeriodEnd,
		billingUnavailable: overview.unavailable,
		pending: pending ? { requestId: pending.requestId, submittedAt: pending.submittedAt.toISOString() } : null,
		// Only while the request is pending: the address alone confirms nothing.
		deletionRequested: url.searchParams.get('deletion') === 'requested' && pending !== null,
		refused: answersRefusal(args.context),
	})
}

type ActionData = {
	notice: string | null
	/** Where to sign in again, shown after the notice when the session has ended. */
	signInHref?: string
	/** The notice ends with a link to support. */
	contact?: boolean
	errors: Record<string, string>
	values: Record<string, string>
}

const DELETION_NOTICES = {
	unauthorized: 'Your session has ended, so nothing was filed.',
	'identity-provider-unavailable': 'We could not check your email just now. Nothing was filed: please try again in a moment.',
	'db-error': 'We could not save your request. Nothing was filed: please try again in a moment.',
} as const

const DELETION_STATUS = {
	'email-mismatch': 400,
	unauthorized: 401,
	'rate-limited': 429,
	'identity-provider-unavailable': 503,
	'db-error': 500,
}

export async function action(args: ActionFunctionArgs) {
	const user = await requirePageUser(args)
	const form = await readForm(args.request)
	const refuse = (data: ActionData, init: ResponseInit) => recordRefusal(args.context, json<ActionData>(data, init))
	const intent = form.get('intent')
	if (intent === 'portal') {
		const result = await portalFromForm(user)
		if (result instanceof Response) return result
		return refuse({ notice: result.notice, contact: result.contact, errors: {}, values: {} }, noticeInit(result))
	}
	if (intent !== 'delete-request') return refuse({ notice: 'Unknown action.', errors: {}, values: {} }, { status: 400 })

	const values = formValues(form, ['confirmEmail', 'reason'])
	const parsed = deletionRequestSchema.safeParse(values)
	if (!parsed.success) return refuse({ notice: null, errors: fieldErrors(parsed.error), values }, { status: 400 })
	const result = await fileDeletionRequest({ user }, parsed.data)
	if (result.status === 'ok') return redirect(DELETION_REQUESTED_PATH, 303)
	if (result.status === 'table-missing') {
		return refuse(
			{ notice: 'Account deletion is not available on this server yet. Please contact support.', errors: {}, values },
			{ status: 503 },
		)
	}
	const status = DELETION_STATUS[result.code]
	if (result.code === 'email-mismatch') {
		return refuse({ notice: null, errors: { confirmEmail: 'That is not the email address of this account.' }, values }, { status })
	}
	if (result.code === 'rate-limited') {
		const notice = `Too many attempts in a short time. Nothing was filed: please wait ${waitInWords(result.retryAfterSeconds)} and try again.`
		return refuse({ notice, errors: {}, values }, { status, headers: { 'Retry-After': String(result.retryAfterSeconds) } })
	}
	const signInHref = result.code === 'unauthorized' ? signInUrl(ACCOUNT_PATH) : undefined
	return refuse({ notice: DELETION_NOTICES[result.code], signInHref, errors: {}, values }, { status })
}

export default function AccountPage() {
	const { returnedFromCheckout, state, cancelAtPeriodEnd, billingUnavailable, pending, deletionRequested } = useLoaderData<typeof loader>()
	const data = useActionData<typeof action>()
	const submitting = usePendingSubmission()?.get('intent')
	const refused = Boolean(data?.notice) || Object.keys(data?.errors ?? {}).length > 0
	useErrorTitle(refused)
	return (
		<div className="stack" style={{ maxWidth: '46rem' }}>
			<h1>Your account</h1>
			{returnedFromCheckout && state.has_subscription ? (
				<p className="notice notice--ok" role="status">
					Thank you: your {state.status === 'trialing' ? 'free trial' : 'subscription'} has started.
				</p>
			) : null}
			{returnedFromCheckout && !state.has_subscription && !billingUnavailable ? (
				// The processor confirms on its own schedule (the webhook); checking out again would not help.
				<p className="notice" role="status">
					Thank you. We are still confirming your subscription with our payment processor: reload this page in a minute to see it. There is
					no need to check out again.
				</p>
			) : null}
			{data?.notice ? (
				<AlertNotice answer={data} contact={data.contact}>
					{data.notice}
					{data.signInHref ? (
						<>
							{' '}
							<a href={data.signInHref}>Sign in again</a> and try once more.
						</>
					) : null}
				</AlertNotice>
			) : null}
			<BillingSummary
				state={state}
				cancelAtPeriodEnd={cancelAtPeriodEnd}
				unavailable={billingUnavailable}
				deletionPending={pending !== null}
				busy={submitting === 'portal'}
				action={ACCOUNT_PATH}
			/>
			<DeletionRequestSection
				pending={pending}
				justFiled={deletionRequested}
				hasBilling={state.has_subscription || state.processor_customer_id !== null}
				errors={data?.errors ?? {}}
				values={data?.values ?? {}}
				busy={submitting === 'delete-request'}
				action={ACCOUNT_PATH}
			/>
		</div>
	)
}
