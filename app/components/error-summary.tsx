import { useEffect, useRef, type MouseEvent } from 'react'

type Props = {
	/** Field name → message, as an action returns them; keys that are not in `fields` are left out. */
	errors: Record<string, string>
	/** The form's fields in the order they appear; each input's id is its name. */
	fields: readonly string[]
	/** The heading's level: one below the section the form sits in (an h2 section's summary has an h3). */
	headingLevel?: 2 | 3
}

/**
 * A link to a field, followed without leaving the page. The browser's own jump to `#field` is a history
 * entry the router treats as a navigation: it drops the action's answer, so the errors the visitor
 * followed the link to fix disappeared as they arrived. With JavaScript the link focuses the field and
 * scrolls its label into view (a field's top edge alone would hide what it is for); without it, the
 * href does the jump, on a page the server rendered with the errors.
 */
function focusField(event: MouseEvent<HTMLAnchorElement>, field: string) {
	const input = document.getElementById(field)
	if (!input) return
	event.preventDefault()
	const label = document.querySelector(`label[for="${CSS.escape(field)}"]`) ?? input
	label.scrollIntoView({ block: 'start' })
	input.focus({ preventScroll: true })
}

/**
 * "There is a problem" above a refused form, with a link to each field to fix. Rendered by the
 * server, so it works without JavaScript: the browser focuses it on load (autofocus); after a
 * submission made with JavaScript, focus moves to it again each time the errors change.
 * https://design-system.service.gov.uk/components/error-summary/
 */
export function ErrorSummary({ errors, fields, headingLevel = 2 }: Props) {
	const Heading = headingLevel === 3 ? 'h3' : 'h2'
	const ref = useRef<HTMLDivElement>(null)
	const invalid = fields.filter((field) => errors[field])
	useEffect(() => {
		ref.current?.focus()
	}, [errors])
	if (invalid.length === 0) return null
	return (
		<div ref={ref} className="error-summary" role="alert" tabIndex={-1} autoFocus aria-labelledby="error-summary-heading">
			<Heading id="error-summary-heading">There is a problem</Heading>
			<ul>
				{invalid.map((field) => (
					<li key={field}>
						<a href={`#${field}`} onClick={(event) => focusField(event, field)}>
							{errors[field]}
						</a>
					</li>
				))}
			</ul>
		</div>
	)
}
