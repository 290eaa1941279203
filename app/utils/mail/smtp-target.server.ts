import net from 'node:net'

/** Where SMTP_URL sends mail, and how: what nodemailer's pool is given. */
export type SmtpTarget = {
	host: string
	port: number
	secure: boolean
	requireTLS: boolean
	auth: { user: string; pass: string } | undefined
}

/**
 * A relay on this machine: nothing between us and it reads the password. Only an address says so: a
 * name is looked up by nodemailer in DNS first, which can answer anything. `localhost` is the one name
 * taken, and it is connected to as 127.0.0.1, never looked up.
 */
function isLoopbackAddress(host: string) {
	if (net.isIPv4(host)) return host.startsWith('127.')
	if (!net.isIPv6(host)) return false
	const address = host.toLowerCase()
	return address === '::1' || /^::ffff:(127\.\d+\.\d+\.\d+|7f[0-9a-f]{2}:[0-9a-f]{1,4})$/.test(address)
}

const LOCALHOST = /^localhost\.?$/i

export function smtpTarget(smtpUrl: string): SmtpTarget {
	const url = new URL(smtpUrl)
	const secure = url.protocol === 'smtps:'
	// URL keeps an IPv6 address's brackets for smtp: (not a special scheme); nodemailer wants it bare.
	const named = url.hostname.replace(/^\[(.*)\]$/, '$1')
	const host = LOCALHOST.test(named) ? '127.0.0.1' : named
	const auth = url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined
	return {
		host,
		port: Number(url.port || (secure ? 465 : 587)),
		secure,
		// smtp:// upgrades with STARTTLS only when the server offers it, so a server that does not (or
		// anyone between who strips the offer) would read the password in clear. With credentials to a
		// relay off this machine, no TLS means no login and no message: the visitor gets a 500.
		requireTLS: Boolean(auth) && !secure && !isLoopbackAddress(host),
		auth,
	}
}
