import { afterEach, describe, expect, test, vi } from 'vitest'
import { noteOncePerMinute, printableForLog } from './log-note.server.ts'

afterEach(() => {
	vi.useRealTimers()
})

describe('noteOncePerMinute', () => {
	test('writes the first occurrence at once, then once a minute with the count since the last note and the latest details', () => {
		vi.useFakeTimers({ now: 0 })
		const written: [number, string][] = []
		const note = noteOncePerMinute((count, detail: string) => written.push([count, detail]))

		note('a')
		expect(written).toEqual([[1, 'a']])
		vi.setSystemTime(59_999)
		note('b')
		note('c')
		expect(written).toEqual([[1, 'a']])
		vi.setSystemTime(60_000)
		note('d')
		expect(written).toEqual([
			[1, 'a'],
			[3, 'd'],
		])
		vi.setSystemTime(200_000)
		note('e')
		expect(written.at(-1)).toEqual([1, 'e'])
	})

	test('each note counts on its own', () => {
		vi.useFakeTimers({ now: 0 })
		const first = vi.fn()
		const second = vi.fn()
		const noteFirst = noteOncePerMinute(first)
		const noteSecond = noteOncePerMinute(second)
		noteFirst()
		noteFirst()
		noteSecond()
		expect(first).toHaveBeenCalledTimes(1)
		expect(second).toHaveBeenCalledWith(1)
	})
})

describe('printableForLog', () => {
	test('folds control characters into a space, so a client cannot forge a log line, and cuts to length', () => {
		expect(printableForLog('a\r\nforged: line\x00\x7f!', 100)).toBe('a forged: line !')
		expect(printableForLog('x'.repeat(200), 120)).toHaveLength(120)
	})
})
