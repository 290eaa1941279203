import { useSyncExternalStore } from 'react'

const subscribe = () => () => {}

/** False in the server's HTML and while hydrating, true afterwards: for UI that only JavaScript can keep true. */
export function useHydrated() {
	return useSyncExternalStore(
		subscribe,
		() => true,
		() => false,
	)
}
