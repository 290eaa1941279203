import { billingStatus } from '#app/modules/billing/status.server.ts'
import { FALLBACK_STATE } from '#app/modules/billing/subscription-state.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import { SessionCannotBeVerified, sessionUserId } from '#app/utils/auth.server.ts'
import { errorResponse, jsonResponse } from '#app/utils/http.server.ts'

const route = apiRoute({
	GET: async ({ request }) => {
		let clerkId: string | null
		try {
			clerkId = await sessionUserId(request)
		} catch (error) {
			// The identity provider's keys could not be loaded: an internal error, which contract §4.4
			// answers with the fallback payload, not as a session that is not signed in.
			if (error instanceof SessionCannotBeVerified) return jsonResponse(FALLBACK_STATE)
			throw error
		}
		if (!clerkId) return errorResponse('unauthorized')
		return jsonResponse(await billingStatus(clerkId))
	},
})

export const loader = route.loader
export const action = route.action
