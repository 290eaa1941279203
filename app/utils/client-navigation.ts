import { useEffect, useRef } from 'react'
import { useLocation, useNavigation, useNavigationType } from '@remix-run/react'

/**
 * A billing button posts, and the action redirects the whole document to Stripe. Remix's navigation
 * stays "submitting" in the page left behind, and Back restores that page from the back/forward
 * cache as it was: every button still disabled. A restored page that was mid-navigation reloads.
 * https://web.dev/articles/bfcache#observe-when-a-page-is-restored-from-bfcache
 */
export function useReloadWhenRestoredMidNavigation() {
	const navigation = useNavigation()
	const navigating = useRef(false)
	useEffect(() => {
		navigating.current = navigation.state !== 'idle'
	}, [navigation.state])
	useEffect(() => {
		const onPageShow = (event: PageTransitionEvent) => {
			if (event.persisted && navigating.current) window.location.reload()
		}
		window.addEventListener('pageshow', onPageShow)
		return () => window.removeEventListener('pageshow', onPageShow)
	}, [])
}

/**
 * Whether focus already sits on (or in) an alert or status that the page moved it to in this
 * render: an error summary, a refused form's notice, a confirmation. Those say what happened and
 * where; a page's own effects run before this root one, so they have already taken focus.
 */
function pageFocusedItsMessage() {
	const active = document.activeElement
	return active instanceof HTMLElement && active.closest('main [role="alert"], main [role="status"]') !== null
}

/**
 * Link state for a control that changes what the page shows, not which page it is (the pricing
 * page's billing period): focus stays on the link, as on a tab, instead of moving to the heading.
 */
export const KEEP_FOCUS = { keepFocus: true } as const

function keepsFocus(state: unknown) {
	return typeof state === 'object' && state !== null && (state as { keepFocus?: unknown }).keepFocus === true
}

/**
 * A client-side page change is silent for screen readers and leaves focus on the link that was
 * followed: move focus to the new page's heading (else to <main>). Not on the first load, not on
 * a change of #fragment only (an error summary's links move focus to their field themselves), and
 * not when the new page focused its own message: a form posts to the bare path (/account, not
 * /account?checkout=success…), so a refusal changes the address too. Nor when a link asked to keep
 * focus (KEEP_FOCUS) and stayed on the same page: the history entry keeps that state, so Back to it
 * from another page is a page change like any other.
 */
export function useFocusPageOnNavigation() {
	const { pathname, search, state } = useLocation()
	const navigationType = useNavigationType()
	const page = `${pathname}${search}`
	const previous = useRef<{ page: string; pathname: string } | null>(null)
	const keepFocus = keepsFocus(state) && navigationType !== 'POP'
	useEffect(() => {
		const before = previous.current
		const stayedOnPage = keepFocus && before?.pathname === pathname
		if (before !== null && before.page !== page && !stayedOnPage && !pageFocusedItsMessage()) {
			const target = document.querySelector<HTMLElement>('main h1') ?? document.getElementById('main')
			if (target && !target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1')
			target?.focus()
		}
		previous.current = { page, pathname }
	}, [page, pathname, keepFocus])
}
