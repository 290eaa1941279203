// The plan table: names, display prices, daily credits and trial days, in one place. Client-safe
// (the pricing page renders it). Prices at the processor are found by lookup key `<plan>_<interval>`.

export const PAID_PLANS = ['solo', 'team', 'studio', 'agency', 'network', 'broadcaster'] as const
export const PLANS = ['free', ...PAID_PLANS] as const
export const INTERVALS = ['month', 'year'] as const

export type PaidPlan = (typeof PAID_PLANS)[number]
export type Plan = (typeof PLANS)[number]
export type Interval = (typeof INTERVALS)[number]

export type PlanDetails = {
	id: Plan
	name: string
	/** Display prices in whole US dollars. */
	monthlyPrice: number
	yearlyPrice: number
	creditsDaily: number
	trialDays: number
	summary: string
}

export const PLAN_TABLE: Record<Plan, PlanDetails> = {
	free: {
		id: 'free',
		name: 'Free',
		monthlyPrice: 0,
		yearlyPrice: 0,
		creditsDaily: 20,
		trialDays: 0,
		summary: 'Try Callsheet on a short project.',
	},
	solo: {
		id: 'solo',
		name: 'Solo',
		monthlyPrice: 19,
		yearlyPrice: 190,
		creditsDaily: 200,
		trialDays: 14,
		summary: 'One filmmaker, every tool.',
	},
	team: {
		id: 'team',
		name: 'Team',
		monthlyPrice: 49,
		yearlyPrice: 490,
		creditsDaily: 600,
		trialDays: 14,
		summary: 'A small crew sharing projects.',
	},
	studio: {
		id: 'studio',
		name: 'Studio',
		monthlyPrice: 99,
		yearlyPrice: 990,
		creditsDaily: 1500,
		trialDays: 14,
		summary: 'Several productions at once.',
	},
	agency: {
		id: 'agency',
		name: 'Agency',
		monthlyPrice: 199,
		yearlyPrice: 1990,
		creditsDaily: 4000,
		trialDays: 14,
		summary: 'Client work across many teams.',
	},
	network: {
		id: 'network',
		name: 'Network',
		monthlyPrice: 399,
		yearlyPrice: 3990,
		creditsDaily: 10000,
		trialDays: 14,
		summary: 'Series and channels at scale.',
	},
	broadcaster: {
		id: 'broadcaster',
		name: 'Broadcaster',
		monthlyPrice: 799,
		yearlyPrice: 7990,
		creditsDaily: 25000,
		trialDays: 14,
		summary: 'Whole schedules, every department.',
	},
}

export function lookupKey(plan: PaidPlan, interval: Interval) {
	return `${plan}_${interval}`
}

export function isPaidPlan(value: unknown): value is PaidPlan {
	return typeof value === 'string' && (PAID_PLANS as readonly string[]).includes(value)
}

/** What a processor price says about itself: the fields planOfPrice reads (a Stripe.Price has them). */
type PriceFields = {
	lookup_key?: string | null
	metadata?: Record<string, string> | null
	recurring?: { interval?: string } | null
}

/**
 * The plan a processor price stands for. Its lookup key while it holds one; but when a plan's price
 * changes, `npm run billing:sync` moves the key to a new price and subscribers stay on the old one,
 * which keeps the `plan` and `interval` metadata the sync gives every price (one made by hand with
 * only the key, before moving the key). Null for a price of neither kind (another product's).
 */
export function planOfPrice(price: PriceFields | null | undefined): { plan: PaidPlan; interval: Interval } | null {
	const byKey = parseLookupKey(price?.lookup_key)
	if (byKey) return byKey
	const { plan, interval } = price?.metadata ?? {}
	if (!isPaidPlan(plan)) return null
	const billed = interval ?? price?.recurring?.interval
	return billed === 'month' || billed === 'year' ? { plan, interval: billed } : null
}

/** `team_year` → { plan: 'team', interval: 'year' }, or null for keys that are not ours. */
export function parseLookupKey(key: string | null | undefined): { plan: PaidPlan; interval: Interval } | null {
	const match = /^([a-z]+)_(month|year)$/.exec(key ?? '')
	if (!match || !isPaidPlan(match[1])) return null
	return { plan: match[1], interval: match[2] as Interval }
}
