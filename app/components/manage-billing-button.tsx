import { Form } from '@remix-run/react'
import { SubmitButton } from '#app/components/submit-button.tsx'

type Props = {
	/** Waits while a billing form of the page is on its way. */
	busy: boolean
	/** This button's own form is on its way (with JavaScript): it says so. By default, whenever busy. */
	opening?: boolean
	action: string
}

/** Posts `intent=portal` to `action` (the page's own path), whose action redirects to the processor's portal. */
export function ManageBillingButton({ busy, opening = busy, action }: Props) {
	return (
		<Form method="post" action={action}>
			<input type="hidden" name="intent" value="portal" />
			<SubmitButton className="button button--secondary" busy={busy}>
				{opening ? 'Opening billing…' : 'Manage billing'}
			</SubmitButton>
			{/* The pressed button waits (aria-disabled) as its words change: said here too, where screen readers hear it. */}
			<span className="visually-hidden" aria-live="polite">
				{opening ? 'Opening billing…' : ''}
			</span>
		</Form>
	)
}
