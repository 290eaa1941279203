import { openBillingPortal } from '#app/modules/billing/portal.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import { requireApiSession } from '#app/utils/auth.server.ts'
import { domainErrorResponse, jsonResponse } from '#app/utils/http.server.ts'
import { billingConfigured } from '#app/utils/stripe.server.ts'
import { ensureUser } from '#app/utils/users.server.ts'

const route = apiRoute({
	POST: async ({ request }) => {
		const session = await requireApiSession(request)
		// As checkout: "billing is off" is answered before the user's row is read (or made).
		if (!billingConfigured()) return domainErrorResponse({ code: 'processor_not_configured' })
		const result = await openBillingPortal(await ensureUser(session))
		if (result.status === 'error') return domainErrorResponse(result)
		return jsonResponse({ url: result.url })
	},
})

export const loader = route.loader
export const action = route.action
