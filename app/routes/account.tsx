import { json, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node'
import { useActionData, useLoaderData, useNavigation } from '@remix-run/react'
import { BillingSummary } from '#app/components/billing-summary.tsx'
import { DeletionRequestSection } from '#app/components/deletion-request-form.tsx'
import { fileDeletionRequest, pendingDeletionRequest } from '#app/modules/account-deletion/deletion.server.ts'
import { portalFromForm } from '#app/modules/billing/billing-page.server.ts'
import { settleCheckoutReturn } from '#app/modules/billing/checkout-return.server.ts'
import { billingOverview } from '#app/modules/billing/status.server.ts'
import { requirePageUser } from '#app/utils/auth.server.ts'
import { fieldErrors, formValues, readForm } from '#app/utils/forms.server.ts'
import { deletionRequestSchema } from '#app/utils/validation/account.ts'

export const meta: MetaFunction = () => [{ title: 'Your account · Callsheet' }]

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
		pending: pending ? { requestId: pending.requestId, submittedAt: pending.submittedAt.toISOString() } : null,
	})
}

const DELETION_MESSAGES = {
	'email-mismatch': { confirmEmail: 'That is not the email address of this account.' },
	unauthorized: { form: 'Your session has ended. Please sign in again.' },
	'identity-provider-unavailable': { form: 'We could not check your email just now. Nothing was filed: please try again in a moment.' },
	'db-error': { form: 'We could not save your request. Nothing was filed: please try again in a moment.' },
	'rate-limited': { form: 'Too many attempts in a short time. Please wait a minute and try again.' },
} as const

export async function action(args: ActionFunctionArgs) {
	const user = await requirePageUser(args)
	const form = await readForm(args.request)
	const intent = form.get('intent')
	if (intent === 'portal') {
		const result = await portalFromForm(user)
		if (result instanceof Response) return result
		return json({ notice: result.notice, errors: {}, values: {} }, { status: result.status })
	}
	if (intent !== 'delete-request') return json({ notice: 'Unknown action.', errors: {}, values: {} }, { status: 400 })

	const values = formValues(form, ['confirmEmail', 'reason'])
	const parsed = deletionRequestSchema.safeParse(values)
	if (!parsed.success) return json({ notice: null, errors: fieldErrors(parsed.error), values }, { status: 400 })
	const result = await fileDeletionRequest({ user }, parsed.data)
	if (result.status === 'ok') return json({ notice: null, errors: {}, values: {} })
	if (result.status === 'table-missing') {
		return json(
			{ notice: 'Account deletion is not available on this server yet. Please contact support.', errors: {}, values },
			{ status: 503 },
		)
	}
	const message: Record<string, string> = DELETION_MESSAGES[result.code]
	const status = { 'email-mismatch': 400, unauthorized: 401, 'rate-limited': 429, 'identity-provider-unavailable': 503, 'db-error': 500 }[
		result.code
	]
	return json({ notice: message.form ?? null, errors: message, values }, { status })
}

export default function AccountPage() {
	const { returnedFromCheckout, state, cancelAtPeriodEnd, pending } = useLoaderData<typeof loader>()
	const data = useActionData<typeof action>()
	const busy = useNavigation().state !== 'idle'
	return (
		<div className="stack" style={{ maxWidth: '46rem' }}>
			<h1>Your account</h1>
			{returnedFromCheckout && state.has_subscription ? (
				<p className="notice notice--ok" role="status">
					Thank you: your {state.status === 'trialing' ? 'free trial' : 'subscription'} has started.
				</p>
			) : null}
			{data?.notice ? (
				<p className="notice notice--error" role="alert">
					{data.notice}
				</p>
			) : null}
			<BillingSummary state={state} cancelAtPeriodEnd={cancelAtPeriodEnd} busy={busy} />
			<DeletionRequestSection pending={pending} errors={data?.errors ?? {}} values={data?.values ?? {}} busy={busy} />
		</div>
	)
}
