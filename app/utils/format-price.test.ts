import { expect, test } from 'vitest'
import { formatBilledPrice } from './format-price.ts'

test('a billed price is written as /pricing writes prices: whole amounts without cents', () => {
	expect(formatBilledPrice({ amount: 49_000, currency: 'usd' }, 'year')).toBe('$490 a year')
	expect(formatBilledPrice({ amount: 599_000, currency: 'usd' }, 'year')).toBe('$5,990 a year')
	expect(formatBilledPrice({ amount: 4_950, currency: 'usd' }, 'month')).toBe('$49.50 a month')
	expect(formatBilledPrice({ amount: 4_905, currency: 'eur' }, 'month')).toBe('€49.05 a month')
	expect(formatBilledPrice({ amount: 0, currency: 'usd' }, 'month')).toBe('$0 a month')
})

test('amounts are read with the processor’s decimals for the currency, not ISO 4217’s', () => {
	// (Intl keeps a currency code to its amount with a no-break space.)
	// Zero-decimal at the processor: 5000 is ¥5,000, not ¥50.
	expect(formatBilledPrice({ amount: 5_000, currency: 'jpy' }, 'month')).toBe('¥5,000 a month')
	expect(formatBilledPrice({ amount: 50_000, currency: 'ugx' }, 'month')).toBe('UGX\u00a050,000 a month')
	// Whole units in ISO and Intl, hundredths at the processor: 500000 is 5,000 forint, not 500,000.
	expect(formatBilledPrice({ amount: 500_000, currency: 'huf' }, 'month')).toBe('HUF\u00a05,000 a month')
	expect(formatBilledPrice({ amount: 50_000, currency: 'isk' }, 'year')).toBe('ISK\u00a0500 a year')
	expect(formatBilledPrice({ amount: 15_000, currency: 'twd' }, 'month')).toBe('NT$150 a month')
	// Three decimals.
	expect(formatBilledPrice({ amount: 12_500, currency: 'kwd' }, 'month')).toBe('KWD\u00a012.500 a month')
	expect(formatBilledPrice({ amount: 12_000, currency: 'kwd' }, 'month')).toBe('KWD\u00a012 a month')
})
