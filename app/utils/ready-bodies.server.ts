// A Request or Response whose body is already in memory (a JSON answer, a request body the server
// read whole) keeps it as bytes or text until a standard accessor asks for it, and only then builds
// the web stream the Fetch API describes. On Node 20 every web stream is a native-backed object
// (`makeTransferable`): it and everything it reaches survive the young-generation collections and
// are promoted, so one or two streams per API request drove a full collection every ~260 ms under
// load (docs/decisions/0015-bodies-without-streams.md). Our server (`npm start` and `npm run dev`)
// hands these bodies over without a stream (`takeBytes`, `takeText`); any other reader (Remix, stock
// remix-serve, a test) sees an ordinary Request or Response.

const UNUSABLE = 'Body is unusable: it has already been read'

/** A body kept in memory, and the standard Request or Response built from it on a first standard read. */
class HeldBody {
	#taken = false
	#standard: Request | Response | undefined

	constructor(private readonly buildStandard: () => Request | Response) {}

	get used() {
		return this.#taken || (this.#standard?.bodyUsed ?? false)
	}

	/** Marks the body read by its owner (the server, readJsonBody), as any read of a body does. */
	take() {
		if (this.used) throw new TypeError(UNUSABLE)
		this.#taken = true
	}

	standard() {
		if (!this.#standard) {
			this.#standard = this.buildStandard()
			// Already taken by its owner: the standard object shows a used body, as after any other read.
			if (this.#taken) void this.#standard.arrayBuffer().catch(() => {})
		}
		return this.#standard
	}
}

const BODY_READS = ['arrayBuffer', 'blob', 'bytes', 'formData', 'json', 'text'] as const

/**
 * Puts the standard body accessors of both classes below on their prototype: each reads from the
 * standard object the held body builds. As on a standard body, a read that cannot happen is a
 * rejected promise, not a throw.
 */
function readThroughHeldBody<Owner extends Request | Response>(prototype: Owner, heldBodyOf: (owner: Owner) => HeldBody) {
	for (const name of BODY_READS) {
		Object.defineProperty(prototype, name, {
			configurable: true,
			writable: true,
			value(this: Owner) {
				try {
					return heldBodyOf(this).standard()[name]()
				} catch (error) {
					return Promise.reject(error as Error)
				}
			},
		})
	}
	Object.defineProperty(prototype, 'body', {
		configurable: true,
		get(this: Owner) {
			return heldBodyOf(this).standard().body
		},
	})
	Object.defineProperty(prototype, 'bodyUsed', {
		configurable: true,
		get(this: Owner) {
			return heldBodyOf(this).used
		},
	})
}

/** A request whose body the server read whole: what the JSON routes get from the production server. */
export class ReadyBodyRequest extends Request {
	static {
		readThroughHeldBody(this.prototype, (owner) => owner.#held)
	}
	readonly #bytes: Uint8Array<ArrayBuffer>
	readonly #held: HeldBody

	constructor(input: string | URL, init: Omit<RequestInit, 'body'>, bytes: Uint8Array<ArrayBuffer>) {
		super(input, init)
		this.#bytes = bytes
		this.#held = new HeldBody(() => new Request(this.url, { method: this.method, headers: this.headers, body: bytes }))
	}

	/** The body without a stream; taking it uses it up, as any other read of a body does. */
	takeBytes(): Uint8Array<ArrayBuffer> {
		this.#held.take()
		return this.#bytes
	}

	override clone(): ReadyBodyRequest {
		if (this.bodyUsed) throw new TypeError(UNUSABLE)
		return new ReadyBodyRequest(this.url, { method: this.method, headers: new Headers(this.headers), signal: this.signal }, this.#bytes)
	}
}

/** A response whose body is a string already serialized: what jsonResponse returns. */
export class ReadyTextResponse extends Response {
	static {
		readThroughHeldBody(this.prototype, (owner) => owner.#held)
	}
	readonly #text: string
	readonly #held: HeldBody

	constructor(text: string, init: ResponseInit) {
		super(null, init)
		this.#text = text
		this.#held = new HeldBody(() => new Response(text, { status: this.status, statusText: this.statusText, headers: this.headers }))
	}

	/** The body without a stream; taking it uses it up, as any other read of a body does. */
	takeText(): string {
		this.#held.take()
		return this.#text
	}

	override clone(): ReadyTextResponse {
		if (this.bodyUsed) throw new TypeError(UNUSABLE)
		return new ReadyTextResponse(this.#text, { status: this.status, statusText: this.statusText, headers: new Headers(this.headers) })
	}
}
