import { installGlobals } from '@remix-run/node'
import { expect, test } from 'vitest'
import { apiRoute } from './api-route.server.ts'
import { errorResponse } from './http.server.ts'

// Stock remix-serve imports the build and then replaces the global Response (and Request) with
// Remix's own (@remix-run/serve's cli, nativeFetch off). An answer a route throws is still its answer.
test('a thrown errorResponse is the answer, also after remix-serve has replaced the global Response', async () => {
	const route = apiRoute({
		POST: () => {
			throw errorResponse('unauthorized')
		},
	})
	installGlobals({ nativeFetch: false })
	const response = await route.action({
		request: new Request('http://localhost/api/x', { method: 'POST' }),
		params: {},
		context: { cspNonce: 'nonce', remoteAddress: '127.0.0.1' },
	})
	expect(response.status).toBe(401)
	expect(await response.json()).toEqual({ error: expect.any(String), code: 'unauthorized' })
})
