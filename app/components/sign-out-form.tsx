/**
 * Sign out: a plain form, a whole-page post with or without JavaScript, so the next page loads without
 * the signed-in session's scripts and state (app/routes/sign-out.tsx).
 */
export function SignOutForm({ className }: { className?: string }) {
	return (
		<form method="post" action="/sign-out" className={className}>
			<button type="submit" className="button button--secondary">
				Sign out
			</button>
		</form>
	)
}
