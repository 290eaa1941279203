import { billingStatus } from '#app/modules/billing/status.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import { sessionUserId } from '#app/utils/auth.server.ts'
import { errorResponse, jsonResponse } from '#app/utils/http.server.ts'

const route = apiRoute({
	GET: async ({ request }) => {
		const clerkId = await sessionUserId(request)
		if (!clerkId) return errorResponse('unauthorized')
		return jsonResponse(await billingStatus(clerkId))
	},
})

export const loader = route.loader
export const action = route.action
