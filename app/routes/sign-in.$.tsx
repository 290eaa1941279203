import { SignIn } from '@clerk/remix'
import type { MetaFunction } from '@remix-run/node'
import { useRouteLoaderData } from '@remix-run/react'

export const meta: MetaFunction = () => [{ title: 'Sign in · Callsheet' }]

export default function SignInPage() {
	const root = useRouteLoaderData<{ clerkConfigured: boolean }>('root')
	return (
		<div className="stack">
			<h1>Sign in</h1>
			{root?.clerkConfigured ? (
				<>
					<noscript>
						<p className="notice">Signing in needs JavaScript. Please enable it and reload this page.</p>
					</noscript>
					<SignIn routing="path" path="/sign-in" />
				</>
			) : (
				<p className="notice">Sign-in is not configured on this server, so accounts are not available here.</p>
			)}
		</div>
	)
}
