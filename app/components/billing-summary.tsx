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

/** What the end of the current period means for this subscription: only an active one in good standing renews. */
function periodEndLabel(status: SubscriptionState['status'], cancelAtPeriodEnd: boolean) {
	if (status === 'canceled' || status === 'none') return 'Ended'
	if (status === 'past_due') return 'Current period ends'
	if (cancelAtPeriodEnd) return 'Ends on'
	return status === 'trialing' ? 'Trial ends' : 'Renews on'
}

type Props = {
	state: SubscriptionState
	cancelAtPeriodEnd: boolean
	/** What the subscription bills each period, as the processor says ("$490 a year"); null when it is not one fixed amount. */
	priceLabel: string | null
	/** The stored state could not be read: say so, rather than show a paying customer "Free". */
	unavailable: boolean
	/** The user asked for their account to be deleted: offering plans would contradict it. */
	deletionPending: boolean
	busy: boolean
	action: string
}

export function BillingSummary({ state, cancelAtPeriodEnd, priceLabel, unavailable, deletionPending, busy, action }: Props) {
	const ends = state.current_period_end ? formatDate(state.current_period_end) : null
	const endLabel = periodEndLabel(state.status, cancelAtPeriodEnd)
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
				{ends ? (
					<>
						<dt>{endLabel}</dt>
						<dd>{ends}</dd>
					</>
				) : null}
			</dl>
			{state.status === 'past_due' ? (
				<p className="notice notice--error">Your last payment did not go through. Update your card in Manage billing to keep your plan.</p>
			) : null}
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
