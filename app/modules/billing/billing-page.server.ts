import { redirect } from '@remix-run/node'
import { waitInWords } from '#app/utils/retry-after.ts'
import type { AppUser } from '#app/utils/users.server.ts'
import { checkoutSchema } from '#app/utils/validation/billing.ts'
import { startCheckout } from './checkout.server.ts'
import { openBillingPortal } from './portal.server.ts'

// What the pricing and account pages do with their billing buttons: the same domain functions as
// POST /api/billing/checkout and /api/billing/portal, answered as a redirect or a notice.

/** `contact`: the page follows the notice with a link to support (nothing the visitor can do fixes it). */
export type BillingNotice = { notice: string; status: number; retryAfterSeconds?: number; contact?: boolean }

/** The answer's init for a notice: its status, and Retry-After on a 429 (as the API sends it). */
export function noticeInit({ status, retryAfterSeconds }: BillingNotice): ResponseInit {
	return retryAfterSeconds === undefined ? { status } : { status, headers: { 'Retry-After': String(retryAfterSeconds) } }
}

type BillingFailureCode = 'processor_not_configured' | 'server-error' | 'already-subscribed' | 'no-customer' | 'bad-body'

const NOTICES = {
	processor_not_configured: {
		notice:
			'Paid plans cannot be started here yet. Nothing was started and nothing was charged. Your account and the Free plan work as usual.',
		status: 503,
		contact: true,
	},
	'server-error': { notice: 'We could not reach the payment service. Nothing was charged: please try again in a moment.', status: 500 },
	'already-subscribed': { notice: 'You already have a subscription. Change plans from Manage billing.', status: 409 },
	'no-customer': { notice: 'There is no billing account yet: choose a plan first.', status: 404 },
	'bad-body': { notice: 'Please choose one of the plans below.', status: 400 },
} satisfies Record<BillingFailureCode, BillingNotice>

type BillingFailure = { code: BillingFailureCode } | { code: 'rate-limited'; retryAfterSeconds: number }

function noticeFor(failure: BillingFailure): BillingNotice {
	if (failure.code !== 'rate-limited') return NOTICES[failure.code]
	const notice = `That was a lot of clicks in a short time. Please wait ${waitInWords(failure.retryAfterSeconds)} and try again.`
	return { notice, status: 429, retryAfterSeconds: failure.retryAfterSeconds }
}

export async function checkoutFromForm(user: AppUser, form: URLSearchParams): Promise<Response | BillingNotice> {
	const parsed = checkoutSchema.safeParse({ plan: form.get('plan'), interval: form.get('interval') || undefined })
	if (!parsed.success) return NOTICES['bad-body']
	const result = await startCheckout(user, parsed.data)
	if (result.status === 'ok') return redirect(result.url, 303)
	return noticeFor(result)
}

export async function portalFromForm(user: AppUser): Promise<Response | BillingNotice> {
	const result = await openBillingPortal(user)
	if (result.status === 'ok') return redirect(result.url, 303)
	return noticeFor(result)
}
