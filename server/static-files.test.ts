import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { expectConsoleError } from '#tests/support/fail-on-console-error.ts'
import { createStaticFiles } from './static-files.js'

let server: http.Server | undefined
let root: string | undefined
afterEach(async () => {
	await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
	if (root) fs.rmSync(root, { recursive: true, force: true })
	server = root = undefined
})

/** build/client's stand-in: two fingerprinted assets, served as start.js serves them. */
async function serveFolder(): Promise<{ url: string; root: string }> {
	root = fs.mkdtempSync(path.join(os.tmpdir(), 'static-files-'))
	fs.mkdirSync(path.join(root, 'assets'))
	fs.writeFileSync(path.join(root, 'assets/app-1a2b.js'), 'console.log("app")')
	fs.writeFileSync(path.join(root, 'assets/gone-3c4d.js'), 'console.log("gone")')
	const serveStatic = createStaticFiles(root)
	server = http.createServer((req, res) => {
		if (serveStatic(req, res, [['x-content-type-options', 'nosniff']])) return
		res.writeHead(404).end('app 404')
	})
	await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
	const { port } = server.address() as { port: number }
	return { url: `http://127.0.0.1:${port}`, root }
}

describe('static files', () => {
	test('serve the indexed file with its type, length, caching and the extra headers', async () => {
		const { url } = await serveFolder()
		const response = await fetch(`${url}/assets/app-1a2b.js`)
		expect(response.status).toBe(200)
		expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
		expect(response.headers.get('content-length')).toBe('18')
		expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
		expect(response.headers.get('x-content-type-options')).toBe('nosniff')
		expect(await response.text()).toBe('console.log("app")')
	})

	test('a file removed after start-up (a deploy replacing build/) is a 404, and the server keeps serving', async () => {
		const { url, root } = await serveFolder()
		fs.rmSync(path.join(root, 'assets/gone-3c4d.js'))
		expectConsoleError()
		const gone = await fetch(`${url}/assets/gone-3c4d.js`)
		expect(gone.status).toBe(404)
		expect(gone.headers.get('x-content-type-options')).toBe('nosniff')
		expect(await gone.text()).toBe('Not found.')
		// An unhandled read error would have ended the process running this test.
		const still = await fetch(`${url}/assets/app-1a2b.js`)
		expect(await still.text()).toBe('console.log("app")')
	})

	test('a read failing after the 200 cuts that response short; the server keeps serving', async () => {
		const { url, root } = await serveFolder()
		const file = path.join(root, 'assets/gone-3c4d.js')
		fs.rmSync(file)
		fs.mkdirSync(file) // a directory opens, then every read fails (EISDIR)
		await expect(fetch(`${url}/assets/gone-3c4d.js`).then((response) => response.text())).rejects.toThrow()
		const still = await fetch(`${url}/assets/app-1a2b.js`)
		expect(await still.text()).toBe('console.log("app")')
	})
})
