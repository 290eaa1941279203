/**
 * Sign out: a plain form, a whole-page post with or without JavaScript, so the next page loads without
 * the signed-in session's scripts and state (app/routes/sign-out.tsx). `primary` where signing out is
 * what the page is for (the sign-out page); elsewhere it sits beside the page's own actions.
 */
export function SignOutForm({ className, primary = false }: { className?: string; primary?: boolean }) {
	return (
		<form method="post" action="/sign-out" className={className}>
			<button type="submit" className={primary ? 'button' : 'button button--secondary'}>
				Sign out
			</button>
		</form>
	)
}
