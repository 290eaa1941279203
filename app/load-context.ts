// What server/app-server.js hands every loader and action.
declare module '@remix-run/node' {
	interface AppLoadContext {
		cspNonce: string
		/** The TCP peer; client-ip.server.ts applies TRUST_PROXY to it. */
		remoteAddress?: string
	}
}

export {}
