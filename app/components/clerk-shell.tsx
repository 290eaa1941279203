import { ClerkProvider } from '@clerk/remix'
import type { ReactNode } from 'react'

export type ClerkState = Parameters<typeof ClerkProvider>[0]['clerkState']

/** Clerk's provider, in a module of its own so the browser loads it only for pages that need it. */
export default function ClerkShell({ clerkState, nonce, children }: { clerkState: ClerkState; nonce?: string; children: ReactNode }) {
	return (
		<ClerkProvider clerkState={clerkState} nonce={nonce}>
			{children}
		</ClerkProvider>
	)
}
