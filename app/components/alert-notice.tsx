import { useEffect, useRef, type ReactNode } from 'react'

type Props = {
	children: ReactNode
	/** Changes with each answer (the action's data): focus moves here again after every refusal. */
	answer: unknown
	/** Ends with a link to support: for refusals nothing on the page can fix. */
	contact?: boolean
}

/**
 * A refused form's message, focused so it is read first: by the browser (autofocus) when the server
 * renders it without JavaScript, and by an effect with it, since React honours autoFocus on form
 * controls only.
 */
export function AlertNotice({ children, answer, contact }: Props) {
	const ref = useRef<HTMLParagraphElement>(null)
	useEffect(() => {
		ref.current?.focus()
	}, [answer])
	return (
		<p ref={ref} className="notice notice--error" role="alert" tabIndex={-1} autoFocus>
			{children}
			{contact ? (
				<>
					{' '}
					<a href="/contact">Contact support</a> if you have a question about plans or billing.
				</>
			) : null}
		</p>
	)
}
