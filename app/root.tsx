import { rootAuthLoader } from '@clerk/remix/ssr.server'
import type { LinksFunction, LoaderFunctionArgs, MetaFunction } from '@remix-run/node'
import { Links, Meta, NavLink, Outlet, Scripts, ScrollRestoration, useLoaderData, useLocation, useRouteLoaderData } from '@remix-run/react'
import { lazy, Suspense, type ComponentType, type ReactNode } from 'react'
import type { ClerkState } from './components/clerk-shell.tsx'
import { ErrorPage, errorPageMeta } from './components/error-page.tsx'
import stylesheet from './styles/app.css?url'
import { env } from './utils/env.server.ts'
import { pageRequestForClerk, pageUserId } from './utils/auth.server.ts'
import { useFocusPageOnNavigation, useReloadWhenRestoredMidNavigation } from './utils/client-navigation.ts'
import { keepPageWhenUnsent } from './utils/network-failure.ts'
import { useNonce } from './utils/nonce-provider.ts'
import { SESSION_REFRESHED } from './utils/session-refresh.ts'

export const links: LinksFunction = () => [
	{ rel: 'stylesheet', href: stylesheet },
	{ rel: 'icon', href: '/favicon.svg', type: 'image/svg+xml' },
]

// Every page gives its own title and description (they replace these); the error page's follow the error.
export const meta: MetaFunction = ({ error }) =>
	error ? errorPageMeta(error) : [{ title: 'Callsheet' }, { name: 'description', content: 'Callsheet: pre-production for film and video.' }]

/**
 * Clerk's browser SDK is large; signed-out visitors on pricing or contact do not need it. It is
 * rendered for signed-in users (it keeps their session fresh) and on the sign-in pages. The server
 * renders it synchronously, so the HTML is complete without JavaScript; the browser loads the chunk
 * lazily and hydrates that part when it arrives.
 */
type ShellProps = { clerkState: ClerkState; nonce?: string; children: ReactNode }
const ClerkShell: ComponentType<ShellProps> = import.meta.env.SSR
	? (await import('./components/clerk-shell.tsx')).default
	: lazy(() => import('./components/clerk-shell.tsx'))

export async function loader(args: LoaderFunctionArgs) {
	const config = env()
	if (!config.clerkConfigured) return { signedIn: false, clerkConfigured: false, loadClerk: false }
	// With sign-in configured, Clerk's loader verifies the session (and may refresh it by redirect).
	// authorizedParties is honoured at run time though its options type omits it.
	const options = {
		publishableKey: config.CLERK_PUBLISHABLE_KEY,
		secretKey: config.CLERK_SECRET_KEY,
		jwtKey: config.CLERK_JWT_KEY,
		authorizedParties: [new URL(config.APP_URL).origin],
	}
	const onSignInPage = new URL(args.request.url).pathname.startsWith('/sign-in')
	// A signed-out visitor outside /sign-in gets no Clerk state (the provider is not loaded): one
	// session check, shared with the page's own loader, instead of a second one in rootAuthLoader.
	// It applies Clerk's handshake rules the same way (getAuth throws the same redirect).
	const userId = await pageUserId(args)
	if (!userId && !onSignInPage) return { signedIn: false, clerkConfigured: true, loadClerk: false }
	// The request the session check gave Clerk: a handshake nonce is counted once, and past its budget
	// Clerk does not see it here either.
	return rootAuthLoader(
		{ ...args, request: await pageRequestForClerk(args) },
		({ request }) => ({
			signedIn: Boolean(request.auth.userId),
			clerkConfigured: true,
			loadClerk: onSignInPage || Boolean(request.auth.userId),
		}),
		options,
	)
}

type RootData = { signedIn: boolean; clerkConfigured: boolean; loadClerk: boolean; clerkState?: ClerkState }

function SiteHeader({ signedIn }: { signedIn: boolean }) {
	return (
		<header className="site-header">
			<div className="site-header__inner">
				<a className="brand" href="/">
					Callsheet
				</a>
				<nav aria-label="Main" className="nav">
					<NavLink to="/pricing">Pricing</NavLink>
					<NavLink to="/contact">Contact</NavLink>
					{signedIn ? <NavLink to="/account">Account</NavLink> : <NavLink to="/sign-in">Sign in</NavLink>}
				</nav>
			</div>
		</header>
	)
}

/** After a form was sent back unsent because the sign-in had to be renewed first (no JavaScript). */
function SessionRefreshedNotice() {
	const refreshed = new URLSearchParams(useLocation().search).get(SESSION_REFRESHED.param) === SESSION_REFRESHED.value
	if (!refreshed) return null
	return (
		<p className="notice" role="status" style={{ marginBottom: '1.5rem' }}>
			Your sign-in had to be renewed, so what you just sent was not received. Please send it again.
		</p>
	)
}

// A form the pages kept after its connection failed (keepTypedOnNetworkFailure) reloads nothing.
export const shouldRevalidate = keepPageWhenUnsent

export function Layout({ children }: { children: ReactNode }) {
	const nonce = useNonce()
	const data = useRouteLoaderData<RootData>('root')
	useReloadWhenRestoredMidNavigation()
	useFocusPageOnNavigation()
	return (
		<html lang="en">
			<head>
				<meta charSet="utf-8" />
				<meta name="viewport" content="width=device-width, initial-scale=1" />
				<Meta />
				<Links />
			</head>
			<body>
				<a className="skip-link" href="#main">
					Skip to content
				</a>
				<SiteHeader signedIn={data?.signedIn ?? false} />
				<main id="main" tabIndex={-1}>
					<SessionRefreshedNotice />
					{children}
				</main>
				<footer className="site-footer">
					<div className="site-footer__inner">
						© Callsheet · <a href="/contact">Contact support</a>
					</div>
				</footer>
				<ScrollRestoration nonce={nonce} />
				<Scripts nonce={nonce} />
			</body>
		</html>
	)
}

export default function App() {
	// The loader's JSON is Clerk's own state object: typed as sent, not as Remix's serialised view.
	const data = useLoaderData() as unknown as RootData
	const nonce = useNonce()
	if (!data.clerkState || !data.loadClerk) return <Outlet />
	return (
		// Only a client-side move to a page that first needs Clerk waits here (e.g. on to /sign-in); the
		// page must not render without its provider meanwhile.
		<Suspense fallback={null}>
			<ClerkShell clerkState={data.clerkState} nonce={nonce || undefined}>
				<Outlet />
			</ClerkShell>
		</Suspense>
	)
}

export const ErrorBoundary = ErrorPage
