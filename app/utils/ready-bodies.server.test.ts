import { describe, expect, test } from 'vitest'
import { jsonResponse, readJsonBody } from './http.server.ts'
import { ReadyBodyRequest, ReadyTextResponse } from './ready-bodies.server.ts'
import { contactSchema } from './validation/contact.ts'

// Any reader other than the production server (Remix under `npm run dev`, remix-serve, a test) must
// see an ordinary Request or Response: these check the standard accessors against the body kept.

const message = { name: 'Ada', email: 'ada@example.test', subject: 'Call sheet', message: 'Hello.' }
const bytesOf = (text: string) => new Uint8Array(Buffer.from(text))

function readyRequest(body = JSON.stringify(message)) {
	const headers = new Headers({ 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) })
	return new ReadyBodyRequest(new URL('http://localhost/api/contact'), { method: 'POST', headers }, bytesOf(body))
}

async function streamText(stream: ReadableStream<Uint8Array> | null) {
	return stream ? new Response(stream).text() : null
}

describe('ReadyBodyRequest', () => {
	test('is a Request with its method, URL and headers, and a body every standard accessor reads', async () => {
		const request = readyRequest()
		expect(request).toBeInstanceOf(Request)
		expect(request.method).toBe('POST')
		expect(request.url).toBe('http://localhost/api/contact')
		expect(request.headers.get('content-type')).toBe('application/json')
		expect(await readyRequest().json()).toEqual(message)
		expect(await readyRequest().text()).toBe(JSON.stringify(message))
		expect(Buffer.from(await readyRequest().arrayBuffer()).toString()).toBe(JSON.stringify(message))
		expect(Buffer.from(await readyRequest().bytes()).toString()).toBe(JSON.stringify(message))
		expect(await (await readyRequest().blob()).text()).toBe(JSON.stringify(message))
		expect(await streamText(readyRequest().body)).toBe(JSON.stringify(message))
		const form = await readyRequest('a=1&b=two')
			.formData()
			.catch((error: unknown) => error)
		expect(form).toBeInstanceOf(TypeError) // no form Content-Type, as a standard Request refuses
	})

	test('a body is read once, whichever way; a clone taken before reads the same bytes', async () => {
		const request = readyRequest()
		const copy = request.clone()
		expect(request.bodyUsed).toBe(false)
		await request.text()
		expect(request.bodyUsed).toBe(true)
		await expect(request.text()).rejects.toThrow(TypeError)
		expect(() => request.clone()).toThrow(TypeError)
		expect(await copy.json()).toEqual(message)

		const taken = readyRequest()
		expect(Buffer.from(taken.takeBytes()).toString()).toBe(JSON.stringify(message))
		expect(taken.bodyUsed).toBe(true)
		expect(() => taken.takeBytes()).toThrow(TypeError)
		// As after any read: the stream is still there, used up, and reading again is refused.
		expect(taken.body).toBeInstanceOf(ReadableStream)
		await expect(taken.json()).rejects.toThrow(TypeError)
	})

	test('readJsonBody reads it without a stream and applies the same rules', async () => {
		const request = readyRequest()
		const parsed = await readJsonBody(request, contactSchema)
		expect(parsed).toEqual({ ok: true, data: message })
		expect(request.bodyUsed).toBe(true)

		const invalid = await readJsonBody(readyRequest('{"name":'), contactSchema)
		expect(invalid.ok).toBe(false)
		if (!invalid.ok) expect(await invalid.response.json()).toMatchObject({ code: 'bad-body', detail: 'The body is not valid JSON.' })

		// More bytes than the limit, whatever the declared length says: refused as a streamed body is.
		const huge = new ReadyBodyRequest(
			new URL('http://localhost/api/contact'),
			{ method: 'POST', headers: { 'Content-Type': 'application/json' } },
			new Uint8Array(64 * 1024 + 1),
		)
		const tooLarge = await readJsonBody(huge, contactSchema)
		expect(tooLarge.ok).toBe(false)
		if (!tooLarge.ok) expect(tooLarge.response.status).toBe(413)
	})
})

describe('ReadyTextResponse (what jsonResponse returns)', () => {
	test('is a Response with its status and headers, and a body every standard accessor reads', async () => {
		const answer = () => jsonResponse({ ok: true }, { status: 201, headers: { 'X-Extra': '1' } })
		const response = answer()
		expect(response).toBeInstanceOf(ReadyTextResponse)
		expect(response).toBeInstanceOf(Response)
		expect(response.status).toBe(201)
		expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
		expect(response.headers.get('x-extra')).toBe('1')
		expect(await answer().json()).toEqual({ ok: true })
		expect(await answer().text()).toBe('{"ok":true}')
		expect(Buffer.from(await answer().arrayBuffer()).toString()).toBe('{"ok":true}')
		expect(Buffer.from(await answer().bytes()).toString()).toBe('{"ok":true}')
		expect(await (await answer().blob()).text()).toBe('{"ok":true}')
		expect(await streamText(answer().body)).toBe('{"ok":true}')
		// How Remix and its adapters re-wrap a response: from its public body and fields.
		const rewrapped = answer()
		expect(await new Response(rewrapped.body, rewrapped).json()).toEqual({ ok: true })
	})

	test('a body is read once, whichever way; a clone taken before reads the same text', async () => {
		const response = jsonResponse({ ok: true })
		const copy = response.clone()
		expect(copy).toBeInstanceOf(ReadyTextResponse)
		expect(copy.headers.get('cache-control')).toBe('no-store')
		await response.json()
		expect(response.bodyUsed).toBe(true)
		await expect(response.text()).rejects.toThrow(TypeError)
		expect(await copy.text()).toBe('{"ok":true}')

		const taken = jsonResponse({ ok: true }) as ReadyTextResponse
		expect(taken.takeText()).toBe('{"ok":true}')
		expect(taken.bodyUsed).toBe(true)
		expect(() => taken.takeText()).toThrow(TypeError)
		await expect(taken.text()).rejects.toThrow(TypeError)
	})
})
