import { Form } from '@remix-run/react'

/** Posts `intent=portal` to the current page, whose action redirects to the processor's portal. */
export function ManageBillingButton({ busy }: { busy: boolean }) {
	return (
		<Form method="post">
			<input type="hidden" name="intent" value="portal" />
			<button className="button button--secondary" type="submit" disabled={busy}>
				Manage billing
			</button>
		</Form>
	)
}
