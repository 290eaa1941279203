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
	if (at < 1 || !/[^\x00-\x7f]/.test(domain) || /[\s:/?#[\]@\\%]/.test(domain) || takenApart(domain)) return address
	try {
		return address.slice(0, at + 1) + new URL(`http://${domain}`).hostname
	} catch {
		return address
	}
}

/**
 * The domain holds what the conversion to ASCII would drop or fold away: invisible characters (a zero
 * width space, a soft hyphen, a byte order mark, a word joiner) or compatibility forms (full-width
 * letters). `ann@exa\u200bmple.com` came out as `ann@example.com`, so it confirmed that account's
 * deletion: such a domain is kept as typed, and then matches no address (and is no valid one).
 */
function takenApart(domain: string) {
	return /\p{Default_Ignorable_Code_Point}/u.test(domain) || domain.normalize('NFKC') !== domain.normalize('NFC')
}

/**
 * An address as two spellings of it compare equal: trimmed, composed (NFC), its domain in ASCII, in
 * lower case. `Anna@Bücher.de` and `anna@xn--bcher-kva.de` are one address, as the contact form's
 * rule already takes them.
 */
export function comparableEmail(address: string) {
	return withAsciiDomain(address.trim().normalize('NFC')).toLowerCase()
}
