import { userWithPendingDeletion } from '#app/modules/account-deletion/deletion.server.ts'
import { startCheckout } from '#app/modules/billing/checkout.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import { requireApiSession } from '#app/utils/auth.server.ts'
import { domainErrorResponse, jsonResponse, readJsonBody } from '#app/utils/http.server.ts'
import { billingConfigured } from '#app/utils/stripe.server.ts'
import { checkoutSchema } from '#app/utils/validation/billing.ts'

const route = apiRoute({
	POST: async ({ request }) => {
		const session = await requireApiSession(request)
		// The body before the database: a request that could never succeed is 400 even while it is down.
		const body = await readJsonBody(request, checkoutSchema)
		if (!body.ok) return body.response
		if (!billingConfigured()) return domainErrorResponse({ code: 'processor_not_configured' })
		// The user's row and their pending deletion request in one round trip (checkout refuses while one is pending).
		const account = await userWithPendingDeletion(session)
		const result = await startCheckout(account, body.data)
		if (result.status === 'error') return domainErrorResponse(result)
		return jsonResponse({ url: result.url })
	},
})

export const loader = route.loader
export const action = route.action
