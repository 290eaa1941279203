import fs from 'node:fs'
import path from 'node:path'
import { pipeline } from 'node:stream'

const TYPES = {
	'.js': 'text/javascript; charset=utf-8',
	'.css': 'text/css; charset=utf-8',
	'.svg': 'image/svg+xml',
	'.png': 'image/png',
	'.ico': 'image/x-icon',
	'.json': 'application/json',
	'.txt': 'text/plain; charset=utf-8',
	'.webmanifest': 'application/manifest+json',
	'.woff2': 'font/woff2',
}

/** Indexes build/client once at start-up, so a request for a static file costs one Map lookup. */
export function createStaticFiles(root) {
	const files = new Map()
	const walk = (dir) => {
		if (!fs.existsSync(dir)) return
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name)
			if (entry.isDirectory()) walk(full)
			else {
				const urlPath = '/' + path.relative(root, full).split(path.sep).join('/')
				files.set(urlPath, {
					full,
					size: fs.statSync(full).size,
					type: TYPES[path.extname(entry.name)] ?? 'application/octet-stream',
					// Vite fingerprints everything under /assets/: those never change.
					cacheControl: urlPath.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=3600',
				})
			}
		}
	}
	walk(root)

	return function serveStatic(req, res, extraHeaders) {
		if (req.method !== 'GET' && req.method !== 'HEAD') return false
		let pathname
		try {
			pathname = decodeURIComponent((req.url ?? '/').split('?')[0])
		} catch {
			return false // malformed %-escape (`/%`): no file has that name; the app answers its 404
		}
		const file = files.get(pathname)
		if (!file) return false
		const headers = Object.fromEntries(extraHeaders)
		headers['content-type'] = file.type
		headers['content-length'] = file.size
		headers['cache-control'] = file.cacheControl
		if (req.method === 'HEAD') {
			res.writeHead(200, headers)
			res.end()
			return true
		}
		// The index is built at start-up; a deploy that replaces build/ under a running server can take
		// a file away. The 200 goes out only once the file is open, and a read error ends that one
		// response: an unhandled stream error would stop the whole process.
		const stream = fs.createReadStream(file.full)
		stream.once('error', (/** @type {NodeJS.ErrnoException} */ error) => {
			if (res.headersSent) return
			console.error(`static: cannot read ${pathname}: ${error.code ?? error.message}`)
			res.writeHead(error.code === 'ENOENT' ? 404 : 503, {
				...Object.fromEntries(extraHeaders),
				'content-type': 'text/plain; charset=utf-8',
			})
			res.end(error.code === 'ENOENT' ? 'Not found.' : 'This file cannot be read right now. Please try again.')
		})
		stream.once('open', () => {
			res.writeHead(200, headers)
			pipeline(stream, res, () => {}) // an error after the 200 (or the client leaving) destroys both
		})
		return true
	}
}
