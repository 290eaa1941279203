import { parsePublishableKey } from '@clerk/shared/keys'
import { env } from './env.server.ts'

// Security headers for every response. The CSP is enforced (not report-only) and lets Clerk work:
// its script and API live on the frontend-API host named inside the publishable key.

/** Read as Clerk reads it (start-up validated the key the same way): a hand decoding could disagree. */
function clerkFrontendOrigin(publishableKey: string | undefined) {
	const frontendApi = publishableKey ? parsePublishableKey(publishableKey)?.frontendApi : undefined
	// It goes into a header: only host characters.
	return frontendApi && /^[a-z0-9.-]+$/i.test(frontendApi) ? `https://${frontendApi}` : undefined
}

function stripeOrigins(apiUrl: string | undefined) {
	const origins = ['https://checkout.stripe.com', 'https://billing.stripe.com']
	// With a stand-in processor the hosted pages live on its own origin.
	if (apiUrl) origins.push(new URL(apiUrl).origin)
	return origins
}

let template: { csp: string; fixed: Array<[string, string]> } | undefined

function build() {
	const config = env()
	const clerk = clerkFrontendOrigin(config.clerkConfigured ? config.CLERK_PUBLISHABLE_KEY : undefined)
	const clerkSources = clerk ? [clerk, 'https://challenges.cloudflare.com'] : []
	const directives = [
		"default-src 'self'",
		`script-src 'self' 'nonce-{NONCE}' ${clerkSources.join(' ')}`.trim(),
		`connect-src 'self' ${clerk ?? ''}`.trim(),
		`img-src 'self' data: ${clerk ? 'https://img.clerk.com' : ''}`.trim(),
		// Clerk's components inject their own style elements.
		"style-src 'self' 'unsafe-inline'",
		`frame-src ${clerk ? 'https://challenges.cloudflare.com' : "'none'"}`,
		"worker-src 'self' blob:",
		"object-src 'none'",
		"base-uri 'self'",
		// Chrome checks form-action against redirects too: pricing's form redirects to hosted checkout.
		`form-action 'self' ${stripeOrigins(config.STRIPE_API_URL).join(' ')}`,
		"frame-ancestors 'none'",
	]
	const fixed: Array<[string, string]> = [
		['X-Content-Type-Options', 'nosniff'],
		['Referrer-Policy', 'strict-origin-when-cross-origin'],
		['X-Frame-Options', 'DENY'],
		['Cross-Origin-Opener-Policy', 'same-origin'],
		['Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()'],
	]
	if (config.NODE_ENV === 'production' && config.APP_URL.startsWith('https://')) {
		fixed.push(['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'])
	}
	return { csp: directives.join('; '), fixed }
}

/** [name, value] pairs for one response; `nonce` authorises that document's inline scripts. */
export function securityHeaders(nonce: string): Array<[string, string]> {
	template ??= build()
	return [...template.fixed, ['Content-Security-Policy', template.csp.replace('{NONCE}', nonce)]]
}
