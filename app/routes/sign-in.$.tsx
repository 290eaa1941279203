import { ClerkLoaded, ClerkLoading, SignIn } from '@clerk/remix'
import { useEffect, useState } from 'react'
import type { MetaFunction } from '@remix-run/node'
import { useRouteLoaderData } from '@remix-run/react'
import { useHydrated } from '#app/utils/hydrated.ts'
import { pageMeta } from '#app/utils/page-meta.ts'

export const meta: MetaFunction = () =>
	pageMeta('Sign in', 'Sign in to Callsheet to see your plan, manage billing and look after your account.')

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
					<ClerkLoading>
						<SlowSignInNotice />
					</ClerkLoading>
					<ClerkLoaded>
						<SignIn routing="path" path="/sign-in" />
					</ClerkLoaded>
				</>
			) : (
				<p className="notice">Sign-in is not configured on this server, so accounts are not available here.</p>
			)}
		</div>
	)
}

/**
 * While the sign-in service loads, say so; if it does not come, say what to do instead of showing
 * nothing. Only once the page's own JavaScript runs: without it nothing loads, and <noscript> says why.
 */
function SlowSignInNotice() {
	const hydrated = useHydrated()
	const [slow, setSlow] = useState(false)
	useEffect(() => {
		const timer = setTimeout(() => setSlow(true), 6_000)
		return () => clearTimeout(timer)
	}, [])
	if (!hydrated) return null
	return (
		<p className={`notice${slow ? ' notice--error' : ''}`} role="status">
			{slow
				? 'The sign-in service is not responding. Check your connection and reload this page, or contact support if it keeps happening.'
				: 'Loading sign-in…'}
		</p>
	)
}
