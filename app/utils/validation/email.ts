// Email addresses as the contact form keeps them and the deletion check compares them (client-safe).

/**
 * An address on an internationalised domain (`anna@bücher.de`) is checked and kept in the domain's
 * ASCII form (`anna@xn--bcher-kva.de`), which every mail server takes. Only a domain with non-ASCII
 * letters and nothing a URL would read as a port, path or credentials is converted; the local part is
 * never touched (a non-ASCII one needs SMTPUTF8, which a relay may not offer, so it stays invalid).
 */
export function withAsciiDomain(address: string) {
	const at = address.lastIndexOf('@')
	const domain = address.slice(at + 1)
	if (at < 1 || !/[^\x00-\x7f]/.test(domain) || /[\s:/?#[\]@\\%]/.test(domain)) return address
	try {
		return address.slice(0, at + 1) + new URL(`http://${domain}`).hostname
	} catch {
		return address
	}
}

/**
 * An address as two spellings of it compare equal: trimmed, composed (NFC), its domain in ASCII, in
 * lower case. `Anna@Bücher.de` and `anna@xn--bcher-kva.de` are one address, as the contact form's
 * rule already takes them.
 */
export function comparableEmail(address: string) {
	return withAsciiDomain(address.trim().normalize('NFC')).toLowerCase()
}
