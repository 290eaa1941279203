import { submitContact } from '#app/modules/contact/contact.server.ts'
import { apiRoute } from '#app/utils/api-route.server.ts'
import { clientIp } from '#app/utils/client-ip.server.ts'
import { domainErrorResponse, jsonResponse, readJsonBody } from '#app/utils/http.server.ts'
import { contactSchema } from '#app/utils/validation/contact.ts'

const route = apiRoute({
	POST: async ({ request, context }) => {
		const body = await readJsonBody(request, contactSchema)
		if (!body.ok) return body.response
		const result = await submitContact(body.data, clientIp(request, context.remoteAddress))
		if (result.status === 'error') return domainErrorResponse(result)
		return jsonResponse({ success: true })
	},
})

export const loader = route.loader
export const action = route.action
