import { Form } from '@remix-run/react'
import type { Interval, PlanDetails } from '#app/modules/billing/plans.ts'
import { SubmitButton } from '#app/components/submit-button.tsx'

type Props = {
	plan: PlanDetails
	interval: Interval
	trialOffered: boolean
	/** The period in which this plan is the user's (null: not their plan). */
	currentIn: Interval | null
	/** A subscriber manages their plan in the portal (the button above the plans) instead of subscribing again. */
	subscribed: boolean
	/**
	 * Why no new subscription is offered, said in place of the plan's button (the account is due to be
	 * deleted, paid plans cannot be started here); null when one is.
	 */
	notStartable: string | null
	/** A billing form of the page is on its way: every plan's button waits. */
	busy: boolean
	/** This plan's own form is the one on its way (with JavaScript): its button says so. */
	opening: boolean
	/** Where the plan's form posts (the pricing page, keeping its period). */
	action: string
}

export function priceLabel(plan: PlanDetails, interval: Interval) {
	const amount = interval === 'year' ? plan.yearlyPrice : plan.monthlyPrice
	return `$${amount.toLocaleString('en-US')}`
}

const BILLED: Record<Interval, string> = { month: 'monthly', year: 'yearly' }

export function PlanCard({ plan, interval, trialOffered, currentIn, subscribed, notStartable, busy, opening, action }: Props) {
	const headingId = `plan-${plan.id}`
	// A trial is offered only where the plan can be started: not beside "not available" on every card.
	const trial = trialOffered && plan.trialDays > 0 && notStartable === null && !subscribed
	const billed = BILLED[interval]
	const isCurrent = currentIn === interval
	const free = plan.monthlyPrice === 0
	const price = priceLabel(plan, interval)
	return (
		// A list item, not a region: seven plans as landmarks would crowd out the page's own (main, nav).
		<li className={`card plan${free ? ' plan--free' : ''}${isCurrent ? ' plan--current' : ''}`} aria-labelledby={headingId}>
			<h2 id={headingId}>
				{plan.name} {isCurrent ? <span className="badge">Your plan</span> : null}
			</h2>
			<p className="plan__price">
				{/* Read as "$19 per month", not "slash month"; "/ month" never split over two lines. Free is free in either period. */}
				{price}{' '}
				{free ? (
					<small>forever</small>
				) : (
					<small>
						<span aria-hidden="true">
							/{'\u00a0'}
							{interval}
						</span>
						<span className="visually-hidden">per {interval}</span>
					</small>
				)}
			</p>
			<p>{plan.summary}</p>
			<ul className="plan__facts">
				<li>{plan.creditsDaily.toLocaleString('en-US')} credits a day</li>
				{interval === 'year' && plan.monthlyPrice > 0 ? <li>Two months free compared with monthly</li> : null}
				{/* What the trial turns into, said before the click rather than on the processor's page. */}
				{trial ? <li>{`${plan.trialDays}-day free trial, then ${price} a ${interval}`}</li> : null}
			</ul>
			{free ? (
				<p className="plan__action field__hint">Included with every account.</p>
			) : subscribed ? (
				// The summary above the plans says once how to switch, with the one Manage billing button.
				// Only their plan in the other period needs a word here: it is not theirs as shown.
				currentIn && !isCurrent ? (
					<p className="plan__action field__hint">
						{`You have ${plan.name} billed ${BILLED[currentIn]}. To be billed ${billed} instead, use Manage billing, above.`}
					</p>
				) : null
			) : notStartable ? (
				<p className="plan__action field__hint">{notStartable}</p>
			) : (
				<Form method="post" action={action}>
					<input type="hidden" name="intent" value="checkout" />
					<input type="hidden" name="plan" value={plan.id} />
					<input type="hidden" name="interval" value={interval} />
					{/* The name starts with the words on the button (WCAG 2.5.3), then says which plan. */}
					<SubmitButton className="button" busy={busy}>
						{opening ? 'Opening checkout…' : trial ? 'Start free trial' : 'Subscribe'}
						<span className="visually-hidden">{` ${opening ? 'for' : trial ? 'of' : 'to'} ${plan.name}, billed ${billed}`}</span>
					</SubmitButton>
				</Form>
			)}
		</li>
	)
}
