import { describe, expect, test } from 'vitest'
import { createApiDispatch } from './api-dispatch.js'

const handlers = (name: string) => ({
	loader: ({ params }: { params: object }) => ({ name, kind: 'loader', params }),
	action: () => ({ name, kind: 'action' }),
})

const build = {
	routes: {
		root: { id: 'root', path: '', module: {} },
		'routes/api.billing.status': {
			id: 'routes/api.billing.status',
			parentId: 'root',
			path: 'api/billing/status',
			module: handlers('status'),
		},
		'routes/api.users.$id': { id: 'routes/api.users.$id', parentId: 'root', path: 'api/users/:id', module: handlers('user') },
		'routes/api.$': { id: 'routes/api.$', parentId: 'root', path: 'api/*', module: handlers('catch-all') },
		'routes/api.loader-only': { id: 'routes/api.loader-only', parentId: 'root', path: 'api/loader-only', module: { loader: () => null } },
		'routes/pricing': { id: 'routes/pricing', parentId: 'root', path: 'pricing', module: handlers('pricing') },
		'routes/api.contact': {
			id: 'routes/api.contact',
			parentId: 'root',
			path: 'api/contact',
			module: { loader: () => null, action: Object.assign(() => null, { allow: 'POST' }) },
		},
	},
}

const dispatch = createApiDispatch(build)
const call = (method: string, pathname: string) => dispatch(method, pathname)?.(new Request('http://x/'), {}) as unknown

describe('direct dispatch of fixed-path API routes', () => {
	test('GET and HEAD call the loader, writes call the action, with no params', () => {
		expect(call('GET', '/api/billing/status')).toEqual({ name: 'status', kind: 'loader', params: {} })
		expect(call('HEAD', '/api/billing/status')).toMatchObject({ kind: 'loader' })
		for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(call(method, '/api/billing/status')).toMatchObject({ kind: 'action' })
	})

	test('matches as Remix does: any case, one trailing slash', () => {
		expect(call('GET', '/API/Billing/Status')).toMatchObject({ name: 'status' })
		expect(call('GET', '/api/billing/status/')).toMatchObject({ name: 'status' })
		expect(dispatch('GET', '/api/billing/status//')).toBeUndefined()
	})

	test('leaves dynamic paths, the catch-all, pages, half-defined modules and other methods to Remix', () => {
		expect(dispatch('GET', '/api/users/1')).toBeUndefined()
		expect(dispatch('GET', '/api/nope')).toBeUndefined()
		expect(dispatch('GET', '/pricing')).toBeUndefined()
		expect(dispatch('GET', '/api/loader-only')).toBeUndefined()
		expect(dispatch('OPTIONS', '/api/billing/status')).toBeUndefined()
	})

	test("reports a fixed route's Allow list (for methods no Fetch Request can carry), none elsewhere", () => {
		expect(dispatch.allowFor('/API/Contact/')).toBe('POST')
		expect(dispatch.allowFor('/api/nope')).toBeUndefined()
		expect(dispatch.allowFor('/api/users/1')).toBeUndefined()
	})
})
