import { json, redirect, type ActionFunctionArgs, type HeadersFunction, type LoaderFunctionArgs } from '@remix-run/node'
import { Link, useActionData, useLoaderData } from '@remix-run/react'
import { useEffect, useRef, useState } from 'react'
import { AlertNotice } from '#app/components/alert-notice.tsx'
import { ErrorPage, orErrorPageMeta } from '#app/components/error-page.tsx'
import { ManageBillingButton } from '#app/components/manage-billing-button.tsx'
import { PlanCard } from '#app/components/plan-card.tsx'
import { KEEP_FOCUS } from '#app/utils/client-navigation.ts'
import { keepAccountHref } from '#app/utils/contact-href.ts'
import { formatDate } from '#app/utils/format-date.ts'
import { formatBilledPrice } from '#app/utils/format-price.ts'
import { pendingDeletionRequestOf, userWithPendingDeletion } from '#app/modules/account-deletion/deletion.server.ts'
import { checkoutFromForm, paidPlansClosed, portalFromForm } from '#app/modules/billing/billing-page.server.ts'
import { PLAN_TABLE, PLANS, type Interval, type Plan } from '#app/modules/billing/plans.ts'
import { billingOverview } from '#app/modules/billing/status.server.ts'
import type { SubscriptionState } from '#app/modules/billing/subscription-state.ts'
import { pageUserId, signInUrl } from '#app/utils/auth.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { formIntent, readForm } from '#app/utils/forms.server.ts'
import { refusalInit } from '#app/utils/http.server.ts'
import { pageMeta } from '#app/utils/page-meta.ts'
import { usePendingSubmission } from '#app/utils/pending-submission.ts'
import { passRetryAfter } from '#app/utils/retry-after.ts'
import { intervalParamSchema } from '#app/utils/validation/billing.ts'

export const meta = orErrorPageMeta<typeof loader>(({ data }) =>
	pageMeta(
		'Plans and pricing',
		`Callsheet plans from Free to Broadcaster, monthly or yearly: every plan includes every tool, and paid plans start with a ${PLAN_TABLE.solo.trialDays}-day free trial.`,
		{ error: data?.refused },
	),
)

// Where this page's action throws, the error page is this route's, under the root's loader (see ErrorPage).
export const ErrorBoundary = ErrorPage

export const headers: HeadersFunction = passRetryAfter

/** The page still opens without it (checkout checks again before anything is opened), but it is logged. */
function unreadDeletionRequest(clerkId: string, error: Error) {
	console.error(`billing: the pricing page could not read the pending deletion request of ${clerkId}: ${error.message}`)
	return null
}

export async function loader(args: LoaderFunctionArgs) {
	const url = new URL(args.request.url)
	const clerkId = await pageUserId(args)
	const [overview, pendingDeletion] = clerkId
		? await Promise.all([
				billingOverview(clerkId),
				pendingDeletionRequestOf(clerkId).catch((error: Error) => unreadDeletionRequest(clerkId, error)),
			])
		: [null, null]
	// The plan and the period it is billed in: the same plan in the other period is not what they have.
	// What they pay is the processor's amount (an older price outlives a sync: decision 0025), not the
	// table's; on a trial, when it ends.
	const current =
		overview?.state.has_subscription && overview.interval
			? {
					plan: overview.state.plan,
					interval: overview.interval,
					price: overview.price ? formatBilledPrice(overview.price, overview.interval) : null,
					status: overview.state.status,
					paused: overview.paused,
					periodEnd: overview.state.current_period_end,
					// Set to end: cancelled to the period's end, or on a date (which may be periods ahead).
					endsOn: overview.endsAt,
				}
			: null
	const asked = url.searchParams.get('interval')
	return json({
		// A subscriber first sees the period they are billed in, where their plan is marked.
		interval: asked ? intervalParamSchema.parse(asked) : (current?.interval ?? 'month'),
		canceled: url.searchParams.get('checkout') === 'canceled',
		signedIn: Boolean(clerkId),
		current,
		// Signed in without a subscription (and known to be so): Free is their plan.
		onFree: overview !== null && !overview.unavailable && !overview.state.has_subscription,
		planUnavailable: overview?.unavailable ?? false,
		// Signed-out visitors see the trial they would get; signed-in users only if they still can.
		trialOffered: overview ? overview.trialEligible : true,
		paidPlansClosed: paidPlansClosed(),
		// Checkout refuses then too (checkout.server.ts); the page says so before the click.
		deletionRequestedOn: pendingDeletion ? pendingDeletion.submittedAt.toISOString() : null,
		deletionRequestId: pendingDeletion?.requestId ?? null,
		refused: answersRefusal(args.context),
	})
}

export async function action(args: ActionFunctionArgs) {
	const form = await readForm(args.request)
	const clerkId = await pageUserId(args)
	if (!clerkId) return redirect(signInUrl(`/pricing?interval=${intervalParamSchema.parse(form.get('interval'))}`), 303)
	const account = () => userWithPendingDeletion(clerkId)
	const intent = formIntent(form, ['checkout', 'portal'])
	const result =
		intent === 'checkout'
			? await checkoutFromForm(account, form)
			: intent === 'portal'
				? await portalFromForm(async () => (await account()).user)
				: { notice: 'This page was out of date. Reload it and try again.', code: 'bad-body' as const, contact: false }
	if (result instanceof Response) return result
	return recordRefusal(args.context, json({ notice: result.notice, contact: result.contact ?? false }, refusalInit(result)))
}

/**
 * Which prices the page shows, once the period changed in place (with JavaScript): focus stays on the
 * link, so nothing else says it. Never on load, where the heading and the marked period say it; and
 * forgotten once a button is pressed, so that the region does not say it again when the button's own
 * words leave it (a refused checkout has its alert).
 */
function usePeriodAnnouncement(interval: Interval, submitting: boolean) {
	const shown = useRef(interval)
	const [announcement, setAnnouncement] = useState('')
	useEffect(() => {
		if (shown.current === interval) return
		shown.current = interval
		setAnnouncement(`Showing ${interval === 'year' ? 'yearly' : 'monthly'} prices.`)
	}, [interval])
	useEffect(() => {
		if (submitting) setAnnouncement('')
	}, [submitting])
	return announcement
}

type CurrentPlan = {
	plan: Plan
	interval: Interval
	price: string | null
	status: SubscriptionState['status']
	paused: boolean
	periodEnd: string | null
	endsOn: string | null
}

/**
 * What the subscriber has, as the account page says it: "You're on Team at $49 a month." A trial has
 * billed nothing yet: when it ends and what follows. One set to end by the end of the period (or
 * sooner) is charged nothing again; one set to end later is charged until then. A payment due says so,
 * and how to keep the plan unless the account is due to be deleted (the notice above says so then).
 */
function currentPlanInWords({ plan, interval, price, status, paused, periodEnd, endsOn }: CurrentPlan, deletionPending: boolean) {
	const name = PLAN_TABLE[plan].name
	if (status === 'past_due') {
		const happened = paused
			? `Your free trial of ${name} has ended without a payment method, so the plan is paused`
			: `Your last payment for ${name} did not go through`
		if (deletionPending) return `${happened}.`
		return `${happened}: ${paused ? 'add a card' : 'update your card'} in Manage billing to keep it.`
	}
	const trial = status === 'trialing'
	if (endsOn && (periodEnd === null || Date.parse(endsOn) <= Date.parse(periodEnd)))
		return trial
			? `You're on a free trial of ${name} until ${formatDate(endsOn)}; it then ends, and nothing is charged.`
			: `You're on ${name} until ${formatDate(endsOn)}; it then ends, and nothing more is charged.`
	const billed = price ?? `billed ${interval === 'year' ? 'yearly' : 'monthly'}`
	const until = endsOn ? ` until it ends on ${formatDate(endsOn)}` : ''
	if (trial && periodEnd) return `You're on a free trial of ${name} until ${formatDate(periodEnd)}, then ${billed}${until}.`
	return price ? `You're on ${name} at ${price}${until}.` : `You're on ${name}, ${billed}${until}.`
}

/** What each paid plan's card says in place of its button when no plan can be started here. */
const CLOSED_ON_CARD = { 'sign-in-off': 'Not available right now.', 'processor-off': 'Not available here yet.' } as const

export default function PricingPage() {
	const {
		interval,
		canceled,
		current,
		onFree,
		planUnavailable,
		trialOffered,
		signedIn,
		paidPlansClosed,
		deletionRequestedOn,
		deletionRequestId,
	} = useLoaderData<typeof loader>()
	const data = useActionData<typeof action>()
	const submission = usePendingSubmission()
	const submitting = submission?.get('intent')
	// One checkout at a time: every billing button waits while one is on its way to the processor.
	const busy = submitting === 'checkout' || submitting === 'portal'
	// Signed out, the same post leads to the sign-in page, not to checkout: nothing to announce then.
	const openingPlan = signedIn && submitting === 'checkout' ? PLANS.find((id) => id === submission?.get('plan')) : undefined
	const periodAnnouncement = usePeriodAnnouncement(interval, submission !== undefined)
	useErrorTitle(Boolean(data?.notice))
	// Posting keeps the period shown, and drops a "checkout canceled" notice that no longer applies.
	const formAction = `/pricing?interval=${interval}`
	const notStartable =
		deletionRequestedOn !== null
			? 'Not available while your account is due to be deleted.'
			: paidPlansClosed && CLOSED_ON_CARD[paidPlansClosed]
	return (
		<div className="stack">
			<h1>Plans and pricing</h1>
			<p className="lead">Every plan includes every tool. Plans differ in daily credits for breakdowns, schedules and exports.</p>
			{paidPlansClosed === 'sign-in-off' ? (
				// Not "sign in first" (nor that signing in needs JavaScript): nobody can sign in here.
				<p className="notice">
					Signing in is not available right now, so plans cannot be started here. <a href="/contact">Contact support</a> if you have a
					question about plans or billing.
				</p>
			) : paidPlansClosed === 'processor-off' ? (
				// Every plan's button would only say this after the click: the plans show none.
				<p className="notice">
					Paid plans cannot be started here yet; the Free plan works as usual. <a href="/contact">Contact support</a> if you have a question
					about plans or billing.
				</p>
			) : signedIn ? null : (
				// Said before the click: a plan's button leads to the sign-in page, not to a trial.
				<>
					<p>You need a Callsheet account to start a free trial: choosing a plan asks you to sign in or create one first.</p>
					<noscript>
						<p className="notice">Signing in needs JavaScript: turn it on in your browser to choose a plan.</p>
					</noscript>
				</>
			)}
			{canceled ? (
				<p className="notice" role="status">
					Checkout was canceled and nothing was charged. Pick a plan whenever you are ready.
				</p>
			) : null}
			{planUnavailable ? (
				<p className="notice notice--error" role="status">
					We could not load your current plan just now, so the plans below do not show it. If you already subscribe, manage your plan from
					your account once this page shows it again.
				</p>
			) : null}
			{deletionRequestedOn && deletionRequestId ? (
				<p className="notice">
					{`You asked for your account to be deleted on ${formatDate(deletionRequestedOn)}, so new plans cannot be started. `}
					To keep your account, <a href={keepAccountHref(deletionRequestId)}>write to us</a>.
				</p>
			) : null}
			{data?.notice ? (
				<AlertNotice answer={data} contact={data.contact}>
					{data.notice}
				</AlertNotice>
			) : null}
			{current ? (
				// Said once, with the one button that changes it; only their plan in the other period says more.
				<div className="notice stack">
					<p>
						{`${currentPlanInWords(current, deletionRequestedOn !== null)} `}
						To switch plans or billing periods, use Manage billing.
					</p>
					<ManageBillingButton busy={busy} opening={submitting === 'portal'} action={formAction} />
				</div>
			) : null}
			{/* Plain links without JavaScript; with it, the prices change in place and focus stays on the
			    period chosen, as on a tab, instead of the page reloading at its top. */}
			<nav aria-label="Billing period" className="segmented">
				<Link to="?interval=month" preventScrollReset state={KEEP_FOCUS} aria-current={interval === 'month' ? 'page' : undefined}>
					Monthly
				</Link>
				<Link to="?interval=year" preventScrollReset state={KEEP_FOCUS} aria-current={interval === 'year' ? 'page' : undefined}>
					Yearly
				</Link>
			</nav>
			{/* The pressed button waits (aria-disabled) and takes its new words then, and prices change under a link
			    that keeps focus: said here, where screen readers hear it. */}
			<p className="visually-hidden" aria-live="polite">
				{openingPlan ? `Opening checkout for ${PLAN_TABLE[openingPlan].name}…` : periodAnnouncement}
			</p>
			{/* role="list": Safari drops a list's role when its bullets are styled away. */}
			<ul className="grid plans" role="list">
				{PLANS.map((id) => (
					<PlanCard
						key={id}
						plan={PLAN_TABLE[id]}
						interval={interval}
						trialOffered={trialOffered}
						currentIn={current?.plan === id ? current.interval : id === 'free' && onFree ? interval : null}
						subscribed={current !== null}
						notStartable={notStartable}
						busy={busy}
						opening={openingPlan === id}
						action={formAction}
					/>
				))}
			</ul>
		</div>
	)
}
