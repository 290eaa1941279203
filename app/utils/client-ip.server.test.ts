import { describe, expect, test } from 'vitest'
import { clientIp } from './client-ip.server.ts'

const from = (forwardedFor: string) => new Request('http://app.test/api/contact', { headers: { 'X-Forwarded-For': forwardedFor } })

describe('clientIp', () => {
	test('is the socket address without trusted proxies, whatever the header says', () => {
		expect(clientIp(from('198.51.100.9'), '::ffff:203.0.113.7', 0)).toBe('203.0.113.7')
	})

	test('counts trusted hops from the right, so a spoofed entry is never used', () => {
		expect(clientIp(from('6.6.6.6, 198.51.100.9'), '10.0.0.2', 1)).toBe('198.51.100.9')
		expect(clientIp(from('6.6.6.6, 198.51.100.9, 10.0.0.1'), '10.0.0.2', 2)).toBe('198.51.100.9')
	})

	test('a port a proxy appended does not make a new client', () => {
		expect(clientIp(from('198.51.100.9:4001'), '10.0.0.2', 1)).toBe('198.51.100.9')
		expect(clientIp(from('[2001:db8::1]:4001'), '10.0.0.2', 1)).toBe('2001:db8::1')
		expect(clientIp(from('2001:db8::1'), '10.0.0.2', 1)).toBe('2001:db8::1') // colons, but no port
	})
})
