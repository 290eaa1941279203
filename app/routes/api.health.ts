import { apiRoute } from '#app/utils/api-route.server.ts'
import { HEALTH_HEADERS, healthBody } from '#app/utils/health.server.ts'

// The production server answers the probe from memory before any routing (server/app-server.js),
// with the same body and headers; this route serves it before the build has loaded and in `npm run dev`.
const route = apiRoute({
	GET: () => new Response(healthBody(), { headers: HEALTH_HEADERS }),
})

export const loader = route.loader
export const action = route.action
