import { env } from './env.server.ts'

/**
 * The client's IP for rate limits. With TRUST_PROXY=0 it is the socket address; with N, the address
 * N hops back in X-Forwarded-For, counted from the right (the part our own proxies wrote). Entries a
 * client wrote itself are never used, so a spoofed header cannot pick someone else's limit.
 */
export function clientIp(request: Request, remoteAddress: string | undefined, trustedHops = env().TRUST_PROXY) {
	const socket = normalize(remoteAddress ?? 'unknown')
	if (trustedHops === 0) return socket
	const forwarded = (request.headers.get('X-Forwarded-For') ?? '')
		.split(',')
		.map((part) => part.trim())
		.filter(Boolean)
	// The chain is [client, proxy1, …]; the socket is the last proxy. Each trusted hop vouches for one entry.
	const chain = [...forwarded, socket]
	const index = Math.max(0, chain.length - 1 - trustedHops)
	return normalize(chain[index] ?? socket)
}

/**
 * One address, one key: IPv4-mapped IPv6 as IPv4, and the port some proxies append dropped
 * (`203.0.113.7:4001`, `[2001:db8::1]:4001`), so a client changing its source port stays one client.
 */
function normalize(address: string) {
	const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address)
	const withoutPort = bracketed ? bracketed[1]! : /^[\d.]+:\d+$/.test(address) ? address.slice(0, address.lastIndexOf(':')) : address
	return withoutPort.startsWith('::ffff:') ? withoutPort.slice('::ffff:'.length) : withoutPort
}
