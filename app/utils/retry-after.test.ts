import { describe, expect, test } from 'vitest'
import { waitInWords } from './retry-after.ts'

describe('waitInWords', () => {
	test('seconds up to 45, then a minute, then whole minutes rounded up', () => {
		expect(waitInWords(1)).toBe('about 1 second')
		expect(waitInWords(45)).toBe('about 45 seconds')
		expect(waitInWords(46)).toBe('about a minute')
		expect(waitInWords(59)).toBe('about a minute')
		expect(waitInWords(90)).toBe('about a minute')
		expect(waitInWords(91)).toBe('about 2 minutes')
		expect(waitInWords(600)).toBe('about 10 minutes')
	})
})
