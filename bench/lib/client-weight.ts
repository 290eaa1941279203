import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'

// What each page makes a browser download before it is interactive: the JS and CSS files under
// /assets/ that its HTML names (modulepreload and stylesheet links, script src, inline module
// imports), gzipped from build/client the way a server or CDN would send them.

export type PageWeight = {
	path: string
	status: number
	jsFiles: number
	jsGzipBytes: number
	cssFiles: number
	cssGzipBytes: number
	missing: string[]
}

export function assetsNamedIn(html: string): string[] {
	const found = new Set<string>()
	const patterns = [
		/<link\b[^>]*\brel="(?:modulepreload|stylesheet|preload)"[^>]*\bhref="(\/assets\/[^"?#]+)"/g,
		/<link\b[^>]*\bhref="(\/assets\/[^"?#]+)"[^>]*\brel="(?:modulepreload|stylesheet|preload)"/g,
		/<script\b[^>]*\bsrc="(\/assets\/[^"?#]+)"/g,
		// Remix's inline module script: import * as route0 from "/assets/…"; import("/assets/…")
		/\bimport\s*(?:[\w*{}\s,]+from\s*)?\(?\s*["'](\/assets\/[^"'?#]+\.js)["']/g,
	]
	for (const pattern of patterns) for (const match of html.matchAll(pattern)) found.add(match[1]!)
	return [...found].filter((asset) => /\.(js|mjs|css)$/.test(asset)).sort()
}

const gzipCache = new Map<string, number>()

function gzipSize(file: string) {
	let size = gzipCache.get(file)
	if (size === undefined) {
		size = zlib.gzipSync(fs.readFileSync(file)).byteLength
		gzipCache.set(file, size)
	}
	return size
}

export function weigh(pagePath: string, status: number, html: string, clientDir: string): PageWeight {
	const weight: PageWeight = { path: pagePath, status, jsFiles: 0, jsGzipBytes: 0, cssFiles: 0, cssGzipBytes: 0, missing: [] }
	for (const asset of assetsNamedIn(html)) {
		const file = path.join(clientDir, asset)
		if (!fs.existsSync(file)) {
			weight.missing.push(asset)
			continue
		}
		if (asset.endsWith('.css')) {
			weight.cssFiles++
			weight.cssGzipBytes += gzipSize(file)
		} else {
			weight.jsFiles++
			weight.jsGzipBytes += gzipSize(file)
		}
	}
	return weight
}

/** Fetches each page (with `cookie` where a page needs a session) and weighs what it ships. */
export async function measureClientWeight(
	baseUrl: string,
	pages: Array<{ path: string; cookie?: string }>,
	clientDir: string,
): Promise<PageWeight[]> {
	const weights: PageWeight[] = []
	for (const page of pages) {
		const response = await fetch(`${baseUrl}${page.path}`, {
			redirect: 'manual',
			headers: { Accept: 'text/html', 'User-Agent': BROWSER_UA, ...(page.cookie ? { Cookie: page.cookie } : {}) },
			signal: AbortSignal.timeout(15_000),
		})
		weights.push(weigh(page.path, response.status, await response.text(), clientDir))
	}
	return weights
}

export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36'
