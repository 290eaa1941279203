import { noteOncePerMinute, printableForLog } from './log-note.server.ts'

// Remix refuses a page form posted as a document (without JavaScript) whose Origin's host matches
// neither X-Forwarded-Host nor Host (@remix-run/server-runtime, throwIfPotentialCSRFAttack, document
// requests only): a 500 with no body, and an Error to handleError. A form from another site never gets
// that far (our server answers it 403, decision 0007), so this is a form from APP_URL behind a proxy
// that does not pass the public host on: every form posted without JavaScript. The log got a stack
// per request that never said why; now one line when first seen, then at most once a minute with a
// count.
const REMIX_ORIGIN_REFUSAL =
	/header does not match `origin` header|headers are not provided\. One of these is needed to compare the `origin` header/

export function isRemixOriginRefusal(error: unknown): boolean {
	return error instanceof Error && REMIX_ORIGIN_REFUSAL.test(error.message)
}

const shown = (value: string | null) => printableForLog(value ?? 'none', 100)

export const noteRemixOriginRefusal = noteOncePerMinute((count, { headers }: Request) =>
	console.warn(
		`forms: ${count} page form(s) refused since the last note (500): Origin ${shown(headers.get('Origin'))} came with X-Forwarded-Host ${shown(headers.get('X-Forwarded-Host'))}, Host ${shown(headers.get('Host'))}. The proxy must pass the public host on (README, "Running on PostgreSQL").`,
	),
)
