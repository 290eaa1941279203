import { apiRoute } from '#app/utils/api-route.server.ts'
import { HEALTH_CACHE_SECONDS, healthBody } from '#app/utils/health.server.ts'

const route = apiRoute({
	GET: () =>
		new Response(healthBody(), {
			headers: {
				'Content-Type': 'application/json; charset=utf-8',
				'Cache-Control': `public, max-age=${HEALTH_CACHE_SECONDS}, s-maxage=${HEALTH_CACHE_SECONDS}`,
			},
		}),
})

export const loader = route.loader
export const action = route.action
