import { describe, expect, test } from 'vitest'
import { normalizeTarget, routedPath, withoutRemixInstructions } from './request-target.js'

describe('normalizeTarget', () => {
	test.each([
		['/api/health', '/api/health'],
		['/pricing?interval=year', '/pricing?interval=year'],
		// Absolute form: the path and query, whatever the host.
		['http://127.0.0.1:3000/api/contact', '/api/contact'],
		['https://example.test/pricing?interval=year', '/pricing?interval=year'],
		['http://example.test', '/'],
		['http://example.test?x=1', '/?x=1'],
		// As written: its dot segments stay for the server's guard against them.
		['http://example.test/api/../pricing', '/api/../pricing'],
		['http://example.test/api/%2e%2e/pricing', '/api/%2e%2e/pricing'],
		// Runs of slashes and backslashes, which a URL parser reads as the start of a host.
		['//api/health', '/api/health'],
		['//evil.example/account', '/evil.example/account'],
		['/\\evil.example/account', '/evil.example/account'],
		['/api//billing///status', '/api/billing/status'],
		['/api\\billing\\status?x=1', '/api/billing/status?x=1'],
		// Escapes that decode are left as sent; a segment whose escapes do not decode is literal text.
		['/api/%61pi%20x', '/api/%61pi%20x'],
		['/%', '/%25'],
		['/pricing%zz', '/pricing%25zz'],
		['/api/%', '/api/%25'],
		['/assets/%E0%A0%A', '/assets/%25E0%25A0%25A'],
		['/a%20b/%E0/c%2Fd', '/a%20b/%25E0/c%2Fd'],
		['//x/%?q=%', '/x/%25?q=%'],
		// The query is data: left as sent.
		['/pricing?next=//evil.example', '/pricing?next=//evil.example'],
		// Not a URL: left to the router.
		['*', '*'],
	])('%s → %s', (target, expected) => {
		expect(normalizeTarget(target)).toBe(expected)
	})

	test('every path it returns decodes, segment by segment, as the router decodes it', () => {
		for (const target of ['/%', '/pricing%zz', '/assets/%E0%A0%A', '/%F0%9F%8E%AC/%']) {
			const path = normalizeTarget(target)
			expect(() => path.split('/').map((segment) => decodeURIComponent(segment))).not.toThrow()
		}
	})

	test('what it returns parses to the same path against any host', () => {
		for (const target of ['//api/health', '/\\evil.example/x', 'http://other.example//api\\contact', '/%E0%A0%A/x']) {
			const normal = normalizeTarget(target)
			const url = new URL(normal, 'http://callsheet.test')
			expect(url.host).toBe('callsheet.test')
			expect(url.pathname + url.search).toBe(normal)
		}
	})
})

describe('withoutRemixInstructions', () => {
	test.each([
		['/api/nope', '/api/nope'],
		['/api/nope?_data=root', '/api/nope'],
		['/api/nope?index', '/api/nope'],
		['/api/nope?a=1&_data=routes%2Fpricing&b=2', '/api/nope?a=1&b=2'],
		['/api/nope?_data=root&_data=routes/account', '/api/nope'],
		// Remix reads the query decoded.
		['/api/nope?%5Fdata=root', '/api/nope'],
		['/api/nope?_dat%61=root&a=1', '/api/nope?a=1'],
		// Names that only start like an instruction are data.
		['/api/nope?_database=1&indexes=2', '/api/nope?_database=1&indexes=2'],
	])('%s → %s', (target, expected) => {
		expect(withoutRemixInstructions(target)).toBe(expected)
	})
})

describe('routedPath', () => {
	test.each([
		['/api/health', '/api/health'],
		['/%61pi/nope', '/api/nope'],
		['/API%2Fnope', '/API%2Fnope'],
		['/api/%E0%A4%A', '/api/%E0%A4%A'],
		['/pricing%20plans', '/pricing plans'],
	])('%s → %s', (pathname, expected) => {
		expect(routedPath(pathname)).toBe(expected)
	})
})
