import { Form } from '@remix-run/react'
import { ManageBillingButton } from './manage-billing-button.tsx'
import type { Interval, PlanDetails } from '#app/modules/billing/plans.ts'

type Props = {
	plan: PlanDetails
	interval: Interval
	trialOffered: boolean
	isCurrent: boolean
	/** A subscriber manages their plan in the portal instead of subscribing again. */
	subscribed: boolean
	busy: boolean
}

export function priceLabel(plan: PlanDetails, interval: Interval) {
	const amount = interval === 'year' ? plan.yearlyPrice : plan.monthlyPrice
	return `$${amount.toLocaleString('en-US')}`
}

export function PlanCard({ plan, interval, trialOffered, isCurrent, subscribed, busy }: Props) {
	const headingId = `plan-${plan.id}`
	return (
		<section className={`card plan${isCurrent ? ' plan--current' : ''}`} aria-labelledby={headingId}>
			<h2 id={headingId}>
				{plan.name} {isCurrent ? <span className="badge">Your plan</span> : null}
			</h2>
			<p className="plan__price">
				{priceLabel(plan, interval)} <small>/ {interval === 'year' ? 'year' : 'month'}</small>
			</p>
			<p>{plan.summary}</p>
			<ul className="plan__facts">
				<li>{plan.creditsDaily.toLocaleString('en-US')} credits a day</li>
				{interval === 'year' && plan.monthlyPrice > 0 ? <li>Two months free compared with monthly</li> : null}
				{trialOffered && plan.trialDays > 0 ? <li>{plan.trialDays}-day free trial</li> : null}
			</ul>
			{plan.id === 'free' ? (
				<p className="plan__action field__hint">Included with every account.</p>
			) : subscribed ? (
				isCurrent ? (
					<ManageBillingButton busy={busy} />
				) : (
					<p className="plan__action field__hint">Switch plans from Manage billing.</p>
				)
			) : (
				<Form method="post">
					<input type="hidden" name="intent" value="checkout" />
					<input type="hidden" name="plan" value={plan.id} />
					<input type="hidden" name="interval" value={interval} />
					<button
						className="button"
						type="submit"
						disabled={busy}
						aria-label={`Subscribe to ${plan.name}, billed ${interval === 'year' ? 'yearly' : 'monthly'}`}
					>
						{trialOffered && plan.trialDays > 0 ? 'Start free trial' : 'Subscribe'}
					</button>
				</Form>
			)}
		</section>
	)
}
