import { redirect } from '@remix-run/node'
import type { AppUser } from '#app/utils/users.server.ts'
import { checkoutSchema } from '#app/utils/validation/billing.ts'
import { startCheckout } from './checkout.server.ts'
import { openBillingPortal } from './portal.server.ts'

// What the pricing and account pages do with their billing buttons: the same domain functions as
// POST /api/billing/checkout and /api/billing/portal, answered as a redirect or a notice.

export type BillingNotice = { notice: string; status: number }

const NOTICES = {
	processor_not_configured: { notice: 'Billing is not enabled on this server yet.', status: 503 },
	'server-error': { notice: 'We could not reach the payment service. Nothing was charged: please try again in a moment.', status: 500 },
	'already-subscribed': { notice: 'You already have a subscription. Change plans from Manage billing.', status: 409 },
	'no-customer': { notice: 'There is no billing account yet: choose a plan first.', status: 404 },
	'bad-body': { notice: 'Please choose one of the plans below.', status: 400 },
	'rate-limited': { notice: 'That was a lot of clicks in a short time. Please wait a minute and try again.', status: 429 },
} as const

export async function checkoutFromForm(user: AppUser, form: URLSearchParams): Promise<Response | BillingNotice> {
	const parsed = checkoutSchema.safeParse({ plan: form.get('plan'), interval: form.get('interval') || undefined })
	if (!parsed.success) return NOTICES['bad-body']
	const result = await startCheckout(user, parsed.data)
	if (result.status === 'ok') return redirect(result.url, 303)
	return NOTICES[result.code]
}

export async function portalFromForm(user: AppUser): Promise<Response | BillingNotice> {
	const result = await openBillingPortal(user)
	if (result.status === 'ok') return redirect(result.url, 303)
	return NOTICES[result.code]
}
