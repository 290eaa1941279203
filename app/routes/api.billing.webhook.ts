import { handleBillingWebhook } from '#app/modules/billing/webhook.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import {
	domainErrorResponse,
	errorResponse,
	jsonResponse,
	notDeclaredJson,
	PayloadTooLargeError,
	readBodyText,
	UnacceptedBodyError,
} from '#app/utils/http.server.ts'

const route = apiRoute({
	POST: async ({ request }) => {
		let rawBody: string
		let refusal = notDeclaredJson(request)
		try {
			// The signature covers the exact bytes: verify the raw text, never re-serialised JSON.
			rawBody = await readBodyText(request)
		} catch (error) {
			if (error instanceof PayloadTooLargeError) return errorResponse('payload-too-large')
			if (!(error instanceof UnacceptedBodyError)) throw error
			// A compressed body (the processor never sends one): judged after the signature like the
			// Content-Type, which the bytes as sent cannot pass, so a forged one is bad-signature.
			rawBody = ''
			refusal ??= error.message
		}
		const result = await handleBillingWebhook(rawBody, request.headers.get('Stripe-Signature'), refusal)
		if (result.status === 'error') return domainErrorResponse(result)
		return jsonResponse({ received: true })
	},
})

export const loader = route.loader
export const action = route.action
