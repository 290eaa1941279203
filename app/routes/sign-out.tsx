import { json, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from '@remix-run/node'
import { useActionData } from '@remix-run/react'
import { AlertNotice } from '#app/components/alert-notice.tsx'
import { ErrorPage, orErrorPageMeta } from '#app/components/error-page.tsx'
import { SignOutForm } from '#app/components/sign-out-form.tsx'
import { signOut } from '#app/modules/session/sign-out.server.ts'
import { pageUserId } from '#app/utils/auth.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { pageMeta } from '#app/utils/page-meta.ts'

export const meta = orErrorPageMeta<typeof loader>(({ data }) =>
	pageMeta('Sign out', 'Sign out of Callsheet on this browser.', { error: data?.refused }),
)

// Where this page's action throws, the error page is this route's, under the root's loader (see ErrorPage).
export const ErrorBoundary = ErrorPage

/**
 * Signing out is a POST (a link or an image elsewhere must not sign anyone out). The page itself is
 * where a visitor lands who opened the address, or whose sign-out form came back after the session
 * had to be renewed first (no JavaScript): it asks once more.
 */
export async function loader(args: LoaderFunctionArgs) {
	if (!(await pageUserId(args))) throw redirect('/', 303)
	return json({ refused: answersRefusal(args.context) })
}

export async function action(args: ActionFunctionArgs) {
	const result = await signOut(args)
	if (result.status === 'error') {
		const notice = 'We could not sign you out just now, so you are still signed in. Please try again in a moment.'
		return recordRefusal(args.context, json({ notice }, { status: 503 }))
	}
	const headers = new Headers({ Location: '/' })
	for (const cookie of result.setCookies) headers.append('Set-Cookie', cookie)
	return new Response(null, { status: 303, headers })
}

export default function SignOutPage() {
	const data = useActionData<typeof action>()
	useErrorTitle(Boolean(data?.notice))
	return (
		<div className="stack" style={{ maxWidth: '36rem' }}>
			<h1>Sign out</h1>
			{data?.notice ? <AlertNotice answer={data}>{data.notice}</AlertNotice> : <p>Sign out of Callsheet on this browser?</p>}
			<div style={{ display: 'flex', gap: '0.75rem', flexWrap: 'wrap', alignItems: 'center' }}>
				<SignOutForm primary />
				<a href="/account">Stay signed in</a>
			</div>
		</div>
	)
}
