import net from 'node:net'

/** Where SMTP_URL sends mail, and how: what nodemailer's pool is given. */
export type SmtpTarget = {
	host: string
	port: number
	secure: boolean
	requireTLS: boolean
	auth: { user: string; pass: string } | undefined
}

/** A relay on this machine: nothing between us and it reads the password. */
function isLoopback(host: string) {
	const name = host.toLowerCase().replace(/\.$/, '')
	if (name === 'localhost' || name === 'localhost.localdomain' || name.endsWith('.localhost')) return true
	if (net.isIPv4(name)) return name.startsWith('127.')
	if (net.isIPv6(name)) return name === '::1' || /^::ffff:(127\.|7f[0-9a-f]{2}:)/.test(name)
	return false
}

export function smtpTarget(smtpUrl: string): SmtpTarget {
	const url = new URL(smtpUrl)
	const secure = url.protocol === 'smtps:'
	// URL keeps an IPv6 address's brackets for smtp: (not a special scheme); nodemailer wants it bare.
	const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
	const auth = url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined
	return {
		host,
		port: Number(url.port || (secure ? 465 : 587)),
		secure,
		// smtp:// upgrades with STARTTLS only when the server offers it, so a server that does not (or
		// anyone between who strips the offer) would read the password in clear. With credentials to a
		// relay off this machine, no TLS means no login and no message: the visitor gets a 500.
		requireTLS: Boolean(auth) && !secure && !isLoopback(host),
		auth,
	}
}
