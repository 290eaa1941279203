import { errorResponse } from '#app/utils/http.server.ts'

// Any /api/* path without a route of its own: JSON 404 for every method, never the HTML 404 page.
const notFound = () => errorResponse('not-found')

export const loader = notFound
export const action = notFound
