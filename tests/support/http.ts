let counter = 0

/** A distinct client address per call, for servers started with TRUST_PROXY=1. */
export function uniqueIp() {
	counter++
	return `198.51.${Math.floor(counter / 250) % 250}.${(counter % 250) + 1}`
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
	return fetch(url, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json', ...headers },
		body: typeof body === 'string' ? body : JSON.stringify(body),
	})
}

export function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
	return fetch(url, {
		method: 'POST',
		redirect: 'manual',
		headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
		body: new URLSearchParams(fields).toString(),
	})
}
