import type { Interval } from '#app/modules/billing/plans.ts'

/** What a subscription bills each period, in the currency's minor unit as the processor states amounts (4900 is $49). */
export type BilledPrice = { amount: number; currency: string }

// Stripe's own decimals for API amounts (docs.stripe.com/currencies), which are not always ISO 4217's
// (nor Intl's): ISK, HUF and TWD are stated in hundredths there, though charged in whole units.
// Every currency in neither list has two.
const ZERO_DECIMAL = new Set([
	'bif',
	'clp',
	'djf',
	'gnf',
	'jpy',
	'kmf',
	'krw',
	'mga',
	'pyg',
	'rwf',
	'ugx',
	'vnd',
	'vuv',
	'xaf',
	'xof',
	'xpf',
])
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd'])

function decimalsOf(currency: string) {
	if (ZERO_DECIMAL.has(currency)) return 0
	return THREE_DECIMAL.has(currency) ? 3 : 2
}

/**
 * "$490 a year", "€49.50 a month", "¥5,000 a month": whole amounts without ".00", as /pricing writes
 * its prices. Formatted on the server only (the page gets the words): browsers carry their own
 * currency data, and a different rendering would not hydrate.
 */
export function formatBilledPrice({ amount, currency }: BilledPrice, interval: Interval) {
	const decimals = decimalsOf(currency)
	const minorUnits = 10 ** decimals
	const text = new Intl.NumberFormat('en-US', {
		style: 'currency',
		currency: currency.toUpperCase(),
		minimumFractionDigits: amount % minorUnits === 0 ? 0 : decimals,
		maximumFractionDigits: decimals,
	}).format(amount / minorUnits)
	return `${text} a ${interval}`
}
