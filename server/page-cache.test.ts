import http from 'node:http'
import { afterEach, describe, expect, test } from 'vitest'
import { createPageCache } from './page-cache.js'

let server: http.Server | undefined
afterEach(async () => {
	await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
	server = undefined
})

type Render = (nonce: string, url: string) => Response

/**
 * The cache used as server/app-server.js uses it, in front of `render` (a page's stand-in that counts
 * its renders and writes the nonce it is given where a document's scripts carry it).
 */
async function serveCached(render: Render, clock = { now: 0 }) {
	const cache = createPageCache({
		isCacheablePage: (pathname, search) => pathname === '/page' && !search.includes('private'),
		wantsWholeDocument: (userAgent) => userAgent === 'crawler',
		now: () => clock.now,
	})
	let renders = 0
	let nonces = 0
	server = http.createServer((req, res) => {
		void (async () => {
			const nonce = `nonce${++nonces}`
			const headers: Array<[string, string]> = [['content-security-policy', `script-src 'nonce-${nonce}'`]]
			const [pathname, search = ''] = (req.url ?? '/').split('?') as [string, string?]
			const key = cache.keyFor(req, pathname, search)
			const cached = key === undefined ? undefined : cache.get(key)
			if (cached) return cache.send(res, cached, headers, nonce)
			renders++
			const response = render(key === undefined ? nonce : cache.placeholder, req.url ?? '/')
			if (key === undefined) {
				res.writeHead(response.status, Object.fromEntries([...headers, ...response.headers]))
				return res.end(await response.text())
			}
			cache.send(res, await cache.capture(key, response), headers, nonce)
		})()
	})
	await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
	const { port } = server.address() as { port: number }
	return { url: `http://127.0.0.1:${port}`, renders: () => renders }
}

const page: Render = (nonce, url) =>
	new Response(`<!DOCTYPE html><p>${url} · café</p><script nonce="${nonce}">1</script><script nonce="${nonce}">2</script>`, {
		headers: { 'content-type': 'text/html; charset=utf-8', 'x-page': 'yes' },
	})

/** A GET with exactly these headers (fetch drops Host and Sec-* headers). */
function rawGet(url: string, headers: Record<string, string>) {
	return new Promise<string>((resolve, reject) => {
		http
			.get(url, { headers }, (res) => {
				let body = ''
				res.setEncoding('utf8')
				res.on('data', (chunk: string) => (body += chunk))
				res.on('end', () => resolve(body))
			})
			.on('error', reject)
	})
}

const nonceOf = (response: Response) => /'nonce-([^']+)'/.exec(response.headers.get('content-security-policy') ?? '')?.[1]

describe('the signed-out page cache', () => {
	test('renders once, and gives every response its own nonce where the render had the placeholder', async () => {
		const { url, renders } = await serveCached(page)
		const first = await fetch(`${url}/page`)
		const responses = [first, ...(await Promise.all([1, 2].map(() => fetch(`${url}/page`))))]
		const seen = new Set<string>()
		for (const response of responses) {
			const body = await response.text()
			const nonce = nonceOf(response)!
			expect(response.status).toBe(200)
			expect(response.headers.get('x-page')).toBe('yes')
			expect(body).toBe(`<!DOCTYPE html><p>/page · café</p><script nonce="${nonce}">1</script><script nonce="${nonce}">2</script>`)
			expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(body))
			seen.add(nonce)
		}
		expect(seen.size).toBe(3)
		expect(renders()).toBe(1)
	})

	test('keeps a page for ten seconds', async () => {
		const clock = { now: 1_000 }
		const { url, renders } = await serveCached(page, clock)
		await fetch(`${url}/page`).then((r) => r.text())
		clock.now += 9_999
		await fetch(`${url}/page`).then((r) => r.text())
		expect(renders()).toBe(1)
		clock.now += 1
		await fetch(`${url}/page`).then((r) => r.text())
		expect(renders()).toBe(2)
	})

	test('requests that carry an identity, or are not a GET of a listed page, are rendered each time', async () => {
		const { url, renders } = await serveCached(page)
		const asked: Array<[string, RequestInit]> = [
			['/page', { headers: { Cookie: 'theme=dark' } }],
			['/page', { headers: { Authorization: 'Bearer abc' } }],
			['/page', { method: 'HEAD' }],
			['/page', { method: 'POST', body: 'x' }],
			['/other', {}],
			['/page?private=1', {}],
		]
		for (const [path, init] of asked) {
			for (let i = 0; i < 2; i++) {
				const response = await fetch(`${url}${path}`, init)
				await response.arrayBuffer()
				expect(response.status, path).toBe(200)
			}
		}
		expect(renders()).toBe(asked.length * 2)
	})

	test('the URL, the Host, the kind of navigation and a crawler are each their own entry', async () => {
		const { url, renders } = await serveCached(page)
		const year = await (await fetch(`${url}/page?interval=year`)).text()
		const month = await (await fetch(`${url}/page?interval=month`)).text()
		expect(year).toContain('/page?interval=year')
		expect(month).toContain('/page?interval=month')
		const host = new URL(url).host
		await rawGet(`${url}/page?interval=year`, { Host: host })
		expect(renders()).toBe(3)
		await rawGet(`${url}/page?interval=year`, { Host: host, 'Sec-Fetch-Dest': 'document' })
		await rawGet(`${url}/page?interval=year`, { Host: host, Accept: 'text/html' })
		await rawGet(`${url}/page?interval=year`, { Host: 'other.example' })
		await rawGet(`${url}/page?interval=year`, { Host: host, 'User-Agent': 'crawler' })
		expect(renders()).toBe(7)
		await rawGet(`${url}/page?interval=year`, { Host: host, 'Sec-Fetch-Dest': 'document' })
		await rawGet(`${url}/page?interval=year`, { Host: 'other.example' })
		await rawGet(`${url}/page?interval=year`, { Host: host, 'User-Agent': 'crawler' })
		expect(renders()).toBe(7)
	})

	test('a redirect, an error page, a page that sets a cookie or JSON is answered once and not kept', async () => {
		const answers: Record<string, () => Response> = {
			redirect: () => new Response(null, { status: 307, headers: { location: '/elsewhere' } }),
			error: () => new Response('<p>broken</p>', { status: 500, headers: { 'content-type': 'text/html' } }),
			cookie: () => new Response('<p>hi</p>', { headers: { 'content-type': 'text/html', 'set-cookie': 'a=1; Path=/' } }),
			json: () => new Response('{"nonce":"x"}', { headers: { 'content-type': 'application/json' } }),
		}
		for (const [kind, answer] of Object.entries(answers)) {
			const { url, renders } = await serveCached(() => answer())
			for (let i = 0; i < 2; i++) {
				const response = await fetch(`${url}/page`, { redirect: 'manual' })
				await response.arrayBuffer()
				expect(response.status, kind).toBe(answer().status)
				if (kind === 'cookie') expect(response.headers.get('set-cookie')).toBe('a=1; Path=/')
			}
			expect(renders(), kind).toBe(2)
			await new Promise((resolve) => server!.close(resolve))
			server = undefined
		}
	})

	test('holds at most 100 pages, dropping the oldest', async () => {
		const { url, renders } = await serveCached(page)
		for (let i = 0; i <= 100; i++) await fetch(`${url}/page?n=${i}`).then((r) => r.text())
		expect(renders()).toBe(101)
		await fetch(`${url}/page?n=100`).then((r) => r.text())
		await fetch(`${url}/page?n=1`).then((r) => r.text())
		expect(renders()).toBe(101)
		await fetch(`${url}/page?n=0`).then((r) => r.text())
		expect(renders()).toBe(102)
	})
})
