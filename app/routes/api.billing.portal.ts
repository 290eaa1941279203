import { openBillingPortal } from '#app/modules/billing/portal.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import { requireApiUser } from '#app/utils/auth.server.ts'
import { domainErrorResponse, jsonResponse } from '#app/utils/http.server.ts'

const route = apiRoute({
	POST: async ({ request }) => {
		const user = await requireApiUser(request)
		const result = await openBillingPortal(user)
		if (result.status === 'error') return domainErrorResponse(result)
		return jsonResponse({ url: result.url })
	},
})

export const loader = route.loader
export const action = route.action
