import { handleBillingWebhook } from '#app/modules/billing/webhook.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import {
	domainErrorResponse,
	errorResponse,
	jsonResponse,
	notDeclaredJson,
	PayloadTooLargeError,
	readBodyText,
} from '#app/utils/http.server.ts'

const route = apiRoute({
	POST: async ({ request }) => {
		let rawBody: string
		try {
			// The signature covers the exact bytes: verify the raw text, never re-serialised JSON.
			rawBody = await readBodyText(request)
		} catch (error) {
			if (error instanceof PayloadTooLargeError) return errorResponse('payload-too-large')
			throw error
		}
		const result = await handleBillingWebhook(rawBody, request.headers.get('Stripe-Signature'), notDeclaredJson(request))
		if (result.status === 'error') return domainErrorResponse(result)
		return jsonResponse({ received: true })
	},
})

export const loader = route.loader
export const action = route.action
