import { userWithPendingDeletion, fileDeletionRequest } from '#app/modules/account-deletion/deletion.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import { requireApiSession } from '#app/utils/auth.server.ts'
import { domainErrorResponse, jsonResponse, readJsonBody } from '#app/utils/http.server.ts'
import { deletionRequestSchema } from '#app/utils/validation/account.ts'

const route = apiRoute(
	{
		POST: async ({ request }) => {
			const session = await requireApiSession(request)
			// The body before the database: a request that could never succeed is 400 even while it is down.
			const body = await readJsonBody(request, deletionRequestSchema)
			if (!body.ok) return body.response
			const filer = await userWithPendingDeletion(session)
			const result = await fileDeletionRequest(filer, body.data)
			if (result.status === 'table-missing') return jsonResponse({ ok: true, saved: false, table_missing: true })
			if (result.status === 'error') return domainErrorResponse(result)
			return jsonResponse({ ok: true, saved: true, request_id: result.requestId, submitted_at: result.submittedAt.toISOString() })
		},
		// The database failing anywhere on this route (the user row included) is the contract's db-error.
	},
	{ failureCode: 'db-error' },
)

export const loader = route.loader
export const action = route.action
