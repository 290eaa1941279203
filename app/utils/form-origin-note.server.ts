// Remix refuses a page form posted as a document (without JavaScript) whose Origin's host matches
// neither X-Forwarded-Host nor Host (@remix-run/server-runtime, throwIfPotentialCSRFAttack, document
// requests only): a 500 with no body, and an Error to handleError. A form from another site never gets
// that far (our server answers it 403, decision 0007), so this is a form from APP_URL behind a proxy
// that does not pass the public host on: every form posted without JavaScript. The log got a stack
// per request that never said why; now one line when first seen, then at most once a minute with a
// count.
const REMIX_ORIGIN_REFUSAL =
	/header does not match `origin` header|headers are not provided\. One of these is needed to compare the `origin` header/

const NOTE_INTERVAL_MS = 60_000

export function isRemixOriginRefusal(error: unknown): boolean {
	return error instanceof Error && REMIX_ORIGIN_REFUSAL.test(error.message)
}

const note = { count: 0, loggedAt: 0 }

/** What the client sent shapes these: printable, and short. */
const shown = (value: string | null) => (value ?? 'none').replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, 100)

export function noteRemixOriginRefusal(request: Request) {
	note.count++
	const now = Date.now()
	if (now - note.loggedAt < NOTE_INTERVAL_MS) return
	const { headers } = request
	console.warn(
		`forms: ${note.count} page form(s) refused since the last note (500): Origin ${shown(headers.get('Origin'))} came with X-Forwarded-Host ${shown(headers.get('X-Forwarded-Host'))}, Host ${shown(headers.get('Host'))}. The proxy must pass the public host on (README, "Running on PostgreSQL").`,
	)
	note.count = 0
	note.loggedAt = now
}
