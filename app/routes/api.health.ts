import { apiRoute } from '#app/utils/api-route.server.ts'
import { HEALTH_HEADERS, healthBody } from '#app/utils/health.server.ts'

// Our server (`npm start` and `npm run dev`) answers the probe from memory before any routing
// (server/app-server.js), with the same body and headers; this route answers it where that does not:
// under stock remix-serve, and for spellings of the path the server leaves to routing.
const route = apiRoute({
	GET: () => new Response(healthBody(), { headers: HEALTH_HEADERS }),
})

export const loader = route.loader
export const action = route.action
