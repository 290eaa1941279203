/**
 * An email address that a narrow line breaks before its @ rather than inside the domain (the page's
 * `overflow-wrap` would otherwise split it wherever the line ends: "…@exa" / "mple.test").
 */
export function EmailAddress({ address }: { address: string }) {
	const at = address.lastIndexOf('@')
	if (at <= 0) return <>{address}</>
	return (
		<>
			{address.slice(0, at)}
			<wbr />
			{address.slice(at)}
		</>
	)
}
