/**
 * A hyphen and the character after it, held together (white-space: nowrap between them): a browser
 * may end a line after any hyphen, and "…@studio-" / "north.test" reads as a word hyphenated at the
 * line's end, not as part of an address the user types exactly. The characters stay as they are, so
 * a copy is the address (no non-breaking hyphen in place of it).
 */
function heldAfterHyphens(text: string) {
	return text.split(/(-+[^-])/).map((part, i) =>
		i % 2 ? (
			<span key={i} className="nowrap">
				{part}
			</span>
		) : (
			part
		),
	)
}

/**
 * An email address that a narrow line breaks only before its @ or before a dot of its domain, where
 * the next line plainly goes on with the address ("…@mail" / ".example.test"), and never after a
 * hyphen. Without these, the page's `overflow-wrap` would split it wherever the line ends ("…@exa" /
 * "mple.test"). A line breaks as late as it can, so the domain may break at a dot where it would have
 * fitted on a line of its own: kept whole as a box of its own (inline-block), it made Chromium read a
 * space before the @ to screen readers (the hint that says what to type is the field's description).
 */
export function EmailAddress({ address }: { address: string }) {
	const at = address.lastIndexOf('@')
	if (at <= 0) return <>{heldAfterHyphens(address)}</>
	return (
		<>
			{heldAfterHyphens(address.slice(0, at))}
			{address
				.slice(at)
				.split(/(?=\.)/)
				.map((label, i) => (
					<span key={i}>
						<wbr />
						{heldAfterHyphens(label)}
					</span>
				))}
		</>
	)
}
