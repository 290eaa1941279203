import { redirect } from '@remix-run/node'
import { env } from '#app/utils/env.server.ts'
import { nullWhenFailed } from '#app/utils/null-when-failed.server.ts'
import { waitInWords } from '#app/utils/retry-after.ts'
import { billingConfigured } from '#app/utils/stripe.server.ts'
import type { UserWithPendingDeletion } from '#app/modules/account-deletion/deletion.server.ts'
import type { AppUser } from '#app/utils/users.server.ts'
import { checkoutSchema } from '#app/utils/validation/billing.ts'
import { startCheckout } from './checkout.server.ts'
import { openBillingPortal } from './portal.server.ts'

// What the pricing and account pages do with their billing buttons: the same domain functions as
// POST /api/billing/checkout and /api/billing/portal, answered as a redirect or a notice.

type BillingFailureCode =
	'processor_not_configured' | 'server-error' | 'already-subscribed' | 'deletion-pending' | 'no-customer' | 'bad-body'

/** `contact`: the page follows the notice with a link to support (nothing the visitor can do fixes it). */
export type BillingNotice = { notice: string; code: BillingFailureCode | 'rate-limited'; retryAfterSeconds?: number; contact?: boolean }

const NOTICES = {
	processor_not_configured: {
		code: 'processor_not_configured',
		notice:
			'Paid plans cannot be started here yet. Nothing was started and nothing was charged. Your account and the Free plan work as usual.',
		contact: true,
	},
	'server-error': {
		code: 'server-error',
		notice: 'Something went wrong on our side. Nothing was charged: please try again in a moment.',
	},
	'already-subscribed': { code: 'already-subscribed', notice: 'You already have a subscription. Change plans from Manage billing.' },
	'deletion-pending': {
		code: 'deletion-pending',
		notice:
			'You asked for your account to be deleted, so a plan cannot be started. Nothing was charged. To keep your account, write to us.',
		contact: true,
	},
	'no-customer': { code: 'no-customer', notice: 'There is no billing account yet: choose a plan first.' },
	'bad-body': { code: 'bad-body', notice: 'Please choose one of the plans below.' },
} satisfies { [Code in BillingFailureCode]: BillingNotice & { code: Code } }

type BillingFailure = { code: BillingFailureCode } | { code: 'rate-limited'; retryAfterSeconds: number }

/**
 * The user's row, or null when the database failed to give it: the API answers that 500 server-error
 * too. Thrown, it was the generic error page, and the page's own "nothing was charged" never showed.
 */
const readOrNull = <T>(read: () => Promise<T>) =>
	nullWhenFailed(read(), (message) => `billing: the page could not read the account: ${message}`)

function noticeFor(failure: BillingFailure): BillingNotice {
	if (failure.code !== 'rate-limited') return NOTICES[failure.code]
	const notice = `That was a lot of clicks in a short time. Please wait ${waitInWords(failure.retryAfterSeconds)} and try again.`
	return { notice, code: 'rate-limited', retryAfterSeconds: failure.retryAfterSeconds }
}

/**
 * Why no one can start a paid plan from the pricing page (null: they can). Its plan buttons could only
 * fail then, after the click (a sign-in page that cannot sign anyone in, processor_not_configured):
 * the page says so up front and shows none.
 */
export function paidPlansClosed(): 'sign-in-off' | 'processor-off' | null {
	if (!env().clerkConfigured) return 'sign-in-off'
	return billingConfigured() ? null : 'processor-off'
}

/**
 * `account` is read only once the form is good and billing is on, as the API does: "billing is off"
 * does not wait for, or fail with, the database.
 */
export async function checkoutFromForm(
	account: () => Promise<UserWithPendingDeletion>,
	form: URLSearchParams,
): Promise<Response | BillingNotice> {
	// A field left out is a key left out of the JSON; an empty one is refused as the API refuses "".
	const parsed = checkoutSchema.safeParse({ plan: form.get('plan'), interval: form.get('interval') ?? undefined })
	if (!parsed.success) return NOTICES['bad-body']
	if (!billingConfigured()) return NOTICES.processor_not_configured
	const found = await readOrNull(account)
	if (!found) return NOTICES['server-error']
	const result = await startCheckout(found, parsed.data)
	if (result.status === 'ok') return redirect(result.url, 303)
	return noticeFor(result)
}

/** `user` is read only once billing is known to be on, as for checkout. */
export async function portalFromForm(user: () => Promise<AppUser>): Promise<Response | BillingNotice> {
	if (!billingConfigured()) return NOTICES.processor_not_configured
	const found = await readOrNull(user)
	if (!found) return NOTICES['server-error']
	const result = await openBillingPortal(found)
	if (result.status === 'ok') return redirect(result.url, 303)
	return noticeFor(result)
}
