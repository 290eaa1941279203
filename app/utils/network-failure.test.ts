import { describe, expect, test } from 'vitest'
import { isNetworkFailure } from './network-failure.ts'

describe('isNetworkFailure', () => {
	test("the browsers' own words for a fetch that could not be made; not a bug of ours that mentions the network", () => {
		for (const message of [
			'Failed to fetch',
			'NetworkError when attempting to fetch resource.',
			'Load failed',
			'network error',
			'The network connection was lost.',
			'The Internet connection appears to be offline.',
		])
			expect(isNetworkFailure(new TypeError(message)), message).toBe(true)
		expect(isNetworkFailure(new TypeError("Cannot read properties of undefined (reading 'network')"))).toBe(false)
		expect(isNetworkFailure(new Error('Failed to fetch'))).toBe(false)
		expect(isNetworkFailure(new DOMException('The operation was aborted.', 'AbortError'))).toBe(false)
	})
})
