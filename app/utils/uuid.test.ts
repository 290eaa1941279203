import { expect, test } from 'vitest'
import { looksLikeUuid } from './uuid.ts'

test.each(['0b9c5c36-4a1e-4f0e-9d36-6a3c6f1b2e01', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '00000000-0000-0000-0000-000000000000'])(
	'%s has the shape of a row id',
	(value) => {
		expect(looksLikeUuid(value)).toBe(true)
	},
)

// Each of these made PostgreSQL refuse the lookup (invalid input syntax for type uuid): a 500.
test.each([
	'-'.repeat(36),
	'f'.repeat(36),
	'0b9c5c364a1e-4f0e-9d36-6a3c6f1b2e01-',
	'0b9c5c36-4a1e-4f0e-9d36-6a3c6f1b2e0g',
	' 0b9c5c36-4a1e-4f0e-9d36-6a3c6f1b2e0',
	'',
	42,
	null,
])('%o does not', (value) => {
	expect(looksLikeUuid(value)).toBe(false)
})
