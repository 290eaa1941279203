import { useEffect, useRef } from 'react'

type Props = {
	/** Field name → message, as an action returns them; keys that are not in `fields` are left out. */
	errors: Record<string, string>
	/** The form's fields in the order they appear; each input's id is its name. */
	fields: readonly string[]
}

/**
 * "There is a problem" above a refused form, with a link to each field to fix. Rendered by the
 * server, so it works without JavaScript: the browser focuses it on load (autofocus); after a
 * submission made with JavaScript, focus moves to it again each time the errors change.
 * https://design-system.service.gov.uk/components/error-summary/
 */
export function ErrorSummary({ errors, fields }: Props) {
	const ref = useRef<HTMLDivElement>(null)
	const invalid = fields.filter((field) => errors[field])
	useEffect(() => {
		ref.current?.focus()
	}, [errors])
	if (invalid.length === 0) return null
	return (
		<div ref={ref} className="error-summary" role="alert" tabIndex={-1} autoFocus aria-labelledby="error-summary-heading">
			<h2 id="error-summary-heading">There is a problem</h2>
			<ul>
				{invalid.map((field) => (
					<li key={field}>
						<a href={`#${field}`}>{errors[field]}</a>
					</li>
				))}
			</ul>
		</div>
	)
}
