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

function normalize(address: string) {
	return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address
}
