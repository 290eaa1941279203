import { Form } from '@remix-run/react'

/** Posts `intent=portal` to `action` (the page's own path), whose action redirects to the processor's portal. */
export function ManageBillingButton({ busy, action }: { busy: boolean; action: string }) {
	return (
		<Form method="post" action={action}>
			<input type="hidden" name="intent" value="portal" />
			<button className="button button--secondary" type="submit" disabled={busy}>
				Manage billing
			</button>
		</Form>
	)
}
