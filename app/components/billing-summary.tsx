import { ManageBillingButton } from './manage-billing-button.tsx'
import { PLAN_TABLE } from '#app/modules/billing/plans.ts'
import type { SubscriptionState } from '#app/modules/billing/subscription-state.ts'
import { formatDate } from '#app/utils/format-date.ts'

/** The five statuses as people read them (the account page and the admin list). */
export const STATUS_LABEL: Record<SubscriptionState['status'], string> = {
	active: 'Active',
	trialing: 'Free trial',
	past_due: 'Payment overdue',
	canceled: 'Canceled',
	none: 'No subscription',
}

/**
 * The one date worth showing, and what it means. A subscription set to end, or ended, shows its own
 * end, which can come before the period's (cancelled at once, or on a chosen date); an ended one whose
 * end is not known shows none rather than the period's end, which may be weeks ahead. Otherwise the
 * period's end: only an active one in good standing renews then.
 */
function dateToShow(state: SubscriptionState, endsAt: string | null): { label: string; date: string } | null {
	if (!state.has_subscription) return endsAt ? { label: 'Ended', date: endsAt } : null
	if (endsAt) return { label: 'Ends on', date: endsAt }
	if (!state.current_period_end) return null
	const label = state.status === 'past_due' ? 'Current period ends' : state.status === 'trialing' ? 'Trial ends' : 'Renews on'
	return { label, date: state.current_period_end }
}

/**
 * A payment due, and what to do about it. With the account due to be deleted, keeping the plan is not
 * the advice: the deletion section asks them to cancel it, and both said beside each other contradicted.
 */
function paymentDueInWords(paused: boolean, deletionPending: boolean): string {
	const happened = paused
		? 'Your free trial has ended without a payment method, so your plan is paused.'
		: 'Your last payment did not go through.'
	if (deletionPending) return happened
	return `${happened} ${paused ? 'Add a card in Manage billing to keep it.' : 'Update your card in Manage billing to keep your plan.'}`
}

type Props = {
	state: SubscriptionState
	/** When the subscription ends or ended (BillingOverview.endsAt). */
	endsAt: string | null
	/** Paused at the end of its trial for want of a payment method (BillingOverview.paused). */
	paused: boolean
	/** What the subscription bills each period, as the processor says ("$490 a year"); null when it is not one fixed amount. */
	priceLabel: string | null
	/** The stored state could not be read: say so, rather than show a paying customer "Free". */
	unavailable: boolean
	/** The user asked for their account to be deleted: offering plans would contradict it. */
	deletionPending: boolean
	busy: boolean
	action: string
}

export function BillingSummary({ state, endsAt, paused, priceLabel, unavailable, deletionPending, busy, action }: Props) {
	const date = dateToShow(state, endsAt)
	const manage = state.processor_customer_id !== null
	const offerPlans = !state.has_subscription && !deletionPending
	if (unavailable) {
		return (
			<section className="card stack" aria-labelledby="billing-heading">
				<h2 id="billing-heading">Plan and billing</h2>
				<p className="notice notice--error" role="status">
					We could not load your plan and billing details just now. Nothing has changed on your account: please reload this page in a
					moment.
				</p>
			</section>
		)
	}
	return (
		<section className="card stack" aria-labelledby="billing-heading">
			<h2 id="billing-heading">Plan and billing</h2>
			<dl className="facts">
				<dt>Plan</dt>
				<dd>{PLAN_TABLE[state.plan].name}</dd>
				{state.has_subscription && priceLabel ? (
					<>
						<dt>Price</dt>
						<dd>{priceLabel}</dd>
					</>
				) : null}
				<dt>Status</dt>
				<dd>{STATUS_LABEL[state.status]}</dd>
				<dt>Daily credits</dt>
				<dd>{state.credits_daily.toLocaleString('en-US')}</dd>
				{date ? (
					<>
						<dt>{date.label}</dt>
						<dd>{formatDate(date.date)}</dd>
					</>
				) : null}
			</dl>
			{/* A trial bills nothing yet: what happens at its end is said, not left to the date's label. */}
			{state.status === 'trialing' && !endsAt && priceLabel && date ? (
				<p>{`When the trial ends on ${formatDate(date.date)}, ${priceLabel} is charged automatically unless you cancel in Manage billing.`}</p>
			) : null}
			{state.status === 'past_due' ? <p className="notice notice--error">{paymentDueInWords(paused, deletionPending)}</p> : null}
			{/* No empty row (and its gap) when there is nothing to offer: a pending deletion, no customer. */}
			{manage || offerPlans ? (
				<div style={{ display: 'flex', gap: '0.75rem', flexWrap: 'wrap' }}>
					{manage ? <ManageBillingButton busy={busy} action={action} /> : null}
					{offerPlans ? (
						<a className="button" href="/pricing">
							See plans
						</a>
					) : null}
				</div>
			) : null}
		</section>
	)
}
