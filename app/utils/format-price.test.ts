import { expect, test } from 'vitest'
import { formatBilledPrice } from './format-price.ts'

test('a billed price is written as /pricing writes prices: whole amounts without cents, the currency’s own minor unit', () => {
	expect(formatBilledPrice({ amount: 49_000, currency: 'usd' }, 'year')).toBe('$490 a year')
	expect(formatBilledPrice({ amount: 599_000, currency: 'usd' }, 'year')).toBe('$5,990 a year')
	expect(formatBilledPrice({ amount: 4_950, currency: 'usd' }, 'month')).toBe('$49.50 a month')
	expect(formatBilledPrice({ amount: 4_905, currency: 'eur' }, 'month')).toBe('€49.05 a month')
	// Yen has no minor unit: 5000 is ¥5,000, not ¥50.
	expect(formatBilledPrice({ amount: 5_000, currency: 'jpy' }, 'month')).toBe('¥5,000 a month')
	expect(formatBilledPrice({ amount: 0, currency: 'usd' }, 'month')).toBe('$0 a month')
})
