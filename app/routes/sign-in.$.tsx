import { ClerkLoaded, ClerkLoading, SignIn } from '@clerk/remix'
import { useEffect, useState } from 'react'
import type { MetaFunction } from '@remix-run/node'
import { useLocation, useRouteLoaderData } from '@remix-run/react'
import { useHydrated } from '#app/utils/hydrated.ts'
import { pageMeta } from '#app/utils/page-meta.ts'

export const meta: MetaFunction = () =>
	pageMeta('Sign in', 'Sign in to Callsheet to see your plan, manage billing and look after your account.')

/**
 * Why the visitor was sent here, read from where they will return to (redirect_url, relative or
 * absolute). Without JavaScript the page can only say that signing in needs it, so this is the context.
 */
function signInReason(search: string): string | null {
	const target = new URLSearchParams(search).get('redirect_url')
	if (!target) return null
	let pathname: string
	try {
		pathname = new URL(target, 'http://callsheet.invalid').pathname
	} catch {
		return null // not an address: no reason to give
	}
	if (pathname === '/pricing') return 'Sign in or create an account to start your free trial. You come back to the plans afterwards.'
	if (pathname === '/account') return 'Sign in to see your plan and billing, or to look after your account.'
	return null
}

export default function SignInPage() {
	const root = useRouteLoaderData<{ clerkConfigured: boolean }>('root')
	// Why they were sent here only where signing in can follow: not "to start your free trial" above
	// "Signing in is not available right now".
	const { search } = useLocation()
	const reason = root?.clerkConfigured ? signInReason(search) : null
	return (
		<div className="stack">
			<h1>Sign in</h1>
			{reason ? <p className="lead">{reason}</p> : null}
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
				<p className="notice">
					Signing in is not available right now. If you need help with your account, <a href="/contact">contact support</a>.
				</p>
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
