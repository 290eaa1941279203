import type { Interval } from '#app/modules/billing/plans.ts'

/** What a subscription bills each period, in the currency's smallest unit, as the processor states amounts (4900 is $49). */
export type BilledPrice = { amount: number; currency: string }

/**
 * "$490 a year", "€49.50 a month", "¥5,000 a month": whole amounts without ".00", as /pricing writes
 * its prices. The currency's own minor unit (none for yen) says where the point goes.
 */
export function formatBilledPrice({ amount, currency }: BilledPrice, interval: Interval) {
	const code = currency.toUpperCase()
	const digits = new Intl.NumberFormat('en-US', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2
	const minorUnits = 10 ** digits
	const text = new Intl.NumberFormat('en-US', {
		style: 'currency',
		currency: code,
		minimumFractionDigits: amount % minorUnits === 0 ? 0 : digits,
		maximumFractionDigits: digits,
	}).format(amount / minorUnits)
	return `${text} a ${interval}`
}
