import { afterEach, beforeEach, vi } from 'vitest'

// House rule: console.error fails a test unless the test says it expects it (expectConsoleError()).
let expected = false
let errors: unknown[][] = []

export function expectConsoleError() {
	expected = true
}

beforeEach(() => {
	expected = false
	errors = []
	vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
		errors.push(args)
	})
})

afterEach(() => {
	vi.mocked(console.error).mockRestore()
	if (!expected && errors.length > 0) {
		throw new Error(`console.error was called unexpectedly:\n${errors.map((args) => args.map(String).join(' ')).join('\n')}`)
	}
})
