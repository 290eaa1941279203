import net from 'node:net'
import { env } from './env.server.ts'

/**
 * The client's key for rate limits. With TRUST_PROXY=0 it is the socket address; with N, the address
 * N hops back in X-Forwarded-For, counted from the right (the part our own proxies wrote). Entries a
 * client wrote itself are never used, so a spoofed header cannot pick someone else's limit; an entry
 * that is not an address (a proxy that passed junk through, a TRUST_PROXY counting more hops than
 * there are) is not a key either: the socket address stands in.
 *
 * An IPv6 client is keyed by its /64 (docs/decisions/0006): one host commonly holds a whole /64 and
 * picks its source address from it at will, so a key per address would give it a fresh limit per request.
 */
export function clientIp(request: Request, remoteAddress: string | undefined, trustedHops = env().TRUST_PROXY) {
	const socket = normalize(remoteAddress ?? 'unknown')
	if (trustedHops === 0) return limitKey(socket)
	const forwarded = (request.headers.get('X-Forwarded-For') ?? '')
		.split(',')
		.map((part) => part.trim())
		.filter(Boolean)
	// The chain is [client, proxy1, …]; the socket is the last proxy. Each trusted hop vouches for one entry.
	const chain = [...forwarded, socket]
	const index = Math.max(0, chain.length - 1 - trustedHops)
	const chosen = normalize(chain[index] ?? socket)
	return limitKey(net.isIP(chosen) ? chosen : socket)
}

/**
 * One address, one key: IPv4-mapped IPv6 as IPv4, and the port some proxies append dropped
 * (`203.0.113.7:4001`, `[2001:db8::1]:4001`), so a client changing its source port stays one client.
 */
function normalize(address: string) {
	const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address)
	const withoutPort = bracketed ? bracketed[1]! : /^[\d.]+:\d+$/.test(address) ? address.slice(0, address.lastIndexOf(':')) : address
	return withoutPort.toLowerCase().startsWith('::ffff:') && net.isIPv4(withoutPort.slice(7)) ? withoutPort.slice(7) : withoutPort
}

/** IPv4 as it is; IPv6 as its /64, written `2001:db8:0:1::/64` whatever the spelling of the address. */
function limitKey(address: string) {
	// Every IPv6 address has a colon; the test first spares IPv4 clients isIPv6's long pattern.
	if (!address.includes(':') || !net.isIPv6(address)) return address
	const [head = '', tail] = address.replace(/%.*$/, '').split('::')
	const groups = (part: string) => (part ? part.split(':') : [])
	const known = [...groups(head), ...(tail === undefined ? [] : groups(tail))]
	// An IPv4 tail (`::ffff:…` is IPv4 already; `64:ff9b::192.0.2.1` is not) is the last two groups.
	const width = known.reduce((sum, group) => sum + (group.includes('.') ? 2 : 1), 0)
	const full = tail === undefined ? groups(head) : [...groups(head), ...Array<string>(8 - width).fill('0'), ...groups(tail)]
	return `${full
		.slice(0, 4)
		.map((group) => parseInt(group, 16).toString(16))
		.join(':')}::/64`
}
