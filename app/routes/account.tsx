import { json, type ActionFunctionArgs, type HeadersFunction, type LoaderFunctionArgs } from '@remix-run/node'
import { useActionData, useLoaderData, type ClientActionFunctionArgs } from '@remix-run/react'
import { AlertNotice } from '#app/components/alert-notice.tsx'
import { ErrorPage, orErrorPageMeta } from '#app/components/error-page.tsx'
import { BillingSummary } from '#app/components/billing-summary.tsx'
import { DeletionRequestSection } from '#app/components/deletion-request-form.tsx'
import { EmailAddress } from '#app/components/email-address.tsx'
import { SignOutForm } from '#app/components/sign-out-form.tsx'
import { deletionFromForm } from '#app/modules/account-deletion/deletion-page.server.ts'
import { pendingDeletionRequest, userWithPendingDeletion } from '#app/modules/account-deletion/deletion.server.ts'
import { portalFromForm } from '#app/modules/billing/billing-page.server.ts'
import { settleCheckoutReturn } from '#app/modules/billing/checkout-return.server.ts'
import { billingOverview } from '#app/modules/billing/status.server.ts'
import { requirePageUserId } from '#app/utils/auth.server.ts'
import { displayedPrimaryEmail } from '#app/utils/identity.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { formIntent, readForm } from '#app/utils/forms.server.ts'
import { formatBilledPrice } from '#app/utils/format-price.ts'
import { refusalInit } from '#app/utils/http.server.ts'
import { pageMeta } from '#app/utils/page-meta.ts'
import { usePendingSubmission } from '#app/utils/pending-submission.ts'
import { passRetryAfter } from '#app/utils/retry-after.ts'
import { ensureUser } from '#app/utils/users.server.ts'
import { keepPageWhenUnsent, keepTypedOnNetworkFailure } from '#app/utils/network-failure.ts'
import { formValues } from '#app/utils/form-values.ts'

// The page's forms post here, never to the address they are shown at: /account?checkout=success&…
// would settle the checkout again and thank the user again above an error.
const ACCOUNT_PATH = '/account'

// Where a filed deletion request lands (Post/Redirect/Get, as the contact page does): reloading the
// confirmation asks for the page again instead of posting the form again.
const DELETION_REQUESTED_PATH = '/account?deletion=requested'

// The address is a courtesy on this page (who is signed in, what to type to confirm a deletion): a
// slow identity provider costs the page that line, not seconds.
const EMAIL_LOOKUP_TIMEOUT_MS = 1_500

export const meta = orErrorPageMeta<typeof loader>(({ data }) =>
	data?.deletionRequested
		? pageMeta(
				'Deletion requested · Your account',
				'Your request to delete your Callsheet account was received; we email you when it is done.',
			)
		: pageMeta('Your account', 'Your Callsheet plan and billing, and how to ask for your account to be deleted.', { error: data?.refused }),
)

// Where this page's action throws, the error page is this route's, under the root's loader (see ErrorPage).
export const ErrorBoundary = ErrorPage

export const headers: HeadersFunction = passRetryAfter

export async function loader(args: LoaderFunctionArgs) {
	const clerkId = await requirePageUserId(args)
	// The page opens while the database is down, with billing shown as unavailable (its own fallback):
	// thrown, it was the generic error page, and after a refused form the form and what was typed too.
	const user = await ensureUser(clerkId).catch((error: Error) => {
		console.error(`account: the page could not read the account of ${clerkId}: ${error.message}`)
		return null
	})
	const url = new URL(args.request.url)
	const sessionId = url.searchParams.get('session_id')
	const returnedFromCheckout = url.searchParams.get('checkout') === 'success'
	if (user && returnedFromCheckout && sessionId) await settleCheckoutReturn(user, sessionId)
	const [overview, pending, email] = await Promise.all([
		billingOverview(clerkId),
		user ? pendingDeletionRequest(user.id).catch(() => null) : null,
		displayedPrimaryEmail(clerkId, { timeoutMs: EMAIL_LOOKUP_TIMEOUT_MS }),
	])
	return json({
		email,
		returnedFromCheckout,
		state: overview.state,
		endsAt: overview.endsAt,
		paused: overview.paused,
		// Written here, on the server: the browser's own currency data could write it differently.
		priceLabel: overview.price && overview.interval ? formatBilledPrice(overview.price, overview.interval) : null,
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
	/** A link to support, shown after the notice when only support can help. */
	contactHref?: string
	/** The notice ends with a link to support. */
	contact?: boolean
	errors: Record<string, string>
	values: Record<string, string>
}

export async function action(args: ActionFunctionArgs) {
	const clerkId = await requirePageUserId(args)
	const form = await readForm(args.request)
	const refuse = (data: ActionData, init: ResponseInit) => recordRefusal(args.context, json<ActionData>(data, init))
	const intent = formIntent(form, ['portal', 'delete-request'])
	if (intent === 'portal') {
		const result = await portalFromForm(() => ensureUser(clerkId))
		if (result instanceof Response) return result
		return refuse({ notice: result.notice, contact: result.contact, errors: {}, values: {} }, refusalInit(result))
	}
	if (intent !== 'delete-request')
		return refuse(
			{ notice: 'This page was out of date. Reload it and try again.', errors: {}, values: {} },
			refusalInit({ code: 'bad-body' }),
		)
	// Read as the API reads a filer: with their pending request, so filing again with the same email
	// is answered as POST /api/account/delete-request answers it (decision 0014).
	const result = await deletionFromForm(() => userWithPendingDeletion(clerkId), form, {
		filedPath: DELETION_REQUESTED_PATH,
		accountPath: ACCOUNT_PATH,
	})
	if (result instanceof Response) return result
	const { init, ...data } = result
	return refuse(data, init)
}

export const shouldRevalidate = keepPageWhenUnsent

// With JavaScript: a form whose connection failed keeps what was typed and says so (see
// keepTypedOnNetworkFailure). Filing again is safe: a pending request is never filed twice.
export const clientAction = ({ request, serverAction }: ClientActionFunctionArgs) =>
	keepTypedOnNetworkFailure(request, serverAction<typeof action>, (typed): ActionData => ({
		notice:
			typed.get('intent') === 'delete-request'
				? 'We could not reach Callsheet, so your request may not have been sent. It is still in the form: check your connection and send it again.'
				: 'We could not reach Callsheet. Check your connection and try again.',
		errors: {},
		values: formValues(typed, ['confirmEmail', 'reason']),
	}))

export default function AccountPage() {
	const { email, returnedFromCheckout, state, endsAt, paused, priceLabel, billingUnavailable, pending, deletionRequested } =
		useLoaderData<typeof loader>()
	const data = useActionData<typeof clientAction>()
	const submitting = usePendingSubmission()?.get('intent')
	const refused = Boolean(data?.notice) || Object.keys(data?.errors ?? {}).length > 0
	useErrorTitle(refused)
	return (
		<div className="stack" style={{ maxWidth: '46rem' }}>
			<div className="page-heading">
				<h1>Your account</h1>
				<SignOutForm />
			</div>
			{email ? (
				<p className="lead">
					Signed in as{' '}
					<strong>
						<EmailAddress address={email} />
					</strong>
				</p>
			) : null}
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
					{data.contactHref ? (
						<>
							{' '}
							<a href={data.contactHref}>Write to support</a> and we will take care of it.
						</>
					) : null}
				</AlertNotice>
			) : null}
			<BillingSummary
				state={state}
				endsAt={endsAt}
				paused={paused}
				priceLabel={priceLabel}
				unavailable={billingUnavailable}
				deletionPending={pending !== null}
				busy={submitting === 'portal'}
				action={ACCOUNT_PATH}
			/>
			<DeletionRequestSection
				accountEmail={email}
				pending={pending}
				justFiled={deletionRequested}
				billingToSettle={state.has_subscription || billingUnavailable}
				subscriptionToCancel={state.has_subscription && endsAt === null}
				billingUnknown={billingUnavailable}
				errors={data?.errors ?? {}}
				values={data?.values ?? {}}
				busy={submitting === 'delete-request'}
				action={ACCOUNT_PATH}
			/>
		</div>
	)
}
