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
		expect(clientIp(from('[2001:db8::1]:4001'), '10.0.0.2', 1)).toBe('2001:db8:0:0::/64')
		expect(clientIp(from('2001:db8::1'), '10.0.0.2', 1)).toBe('2001:db8:0:0::/64') // colons, but no port
	})

	test('an IPv6 client is its /64, however the address is written', () => {
		const sameHost = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002:0:0:0:9', '[2001:db8:1:2::7]:443']
		for (const address of sameHost) expect(clientIp(from(address), '10.0.0.2', 1)).toBe('2001:db8:1:2::/64')
		expect(clientIp(from('2001:db8:1:3::1'), '10.0.0.2', 1)).toBe('2001:db8:1:3::/64')
		expect(clientIp(from('x'), 'fe80::1%eth0', 0)).toBe('fe80:0:0:0::/64')
		expect(clientIp(from('x'), '::1', 0)).toBe('0:0:0:0::/64')
		expect(clientIp(from('64:ff9b::192.0.2.1'), '10.0.0.2', 1)).toBe('64:ff9b:0:0::/64')
		expect(clientIp(from('::ffff:198.51.100.9'), '10.0.0.2', 1)).toBe('198.51.100.9')
	})

	test('an entry that is not an address is not a key: the socket address stands in', () => {
		for (const junk of ['unknown', 'x'.repeat(10_000), '198.51.100.999', '2001:db8::1::2', '<script>']) {
			expect(clientIp(from(`6.6.6.6, ${junk}`), '10.0.0.2', 1)).toBe('10.0.0.2')
		}
		// A TRUST_PROXY counting more hops than there are reaches the client's own first entry: still checked.
		expect(clientIp(from('not-an-ip'), '10.0.0.2', 3)).toBe('10.0.0.2')
	})
})
