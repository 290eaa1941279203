// Invoices for `invoice.paid` / `invoice.payment_failed` events. In this API version an invoice has
// no top-level `subscription`: it is at `parent.subscription_details.subscription`.
import { nowSeconds, randomId } from '../http-util.js'
import { stripeId, type StripeObject } from './objects.js'

export function invoiceObject(subscription: StripeObject, opts: { paid?: boolean; billingReason?: string } = {}): StripeObject {
	const paid = opts.paid ?? true
	const item = (subscription.items as { data: StripeObject[] }).data[0]
	const price = (item?.price ?? {}) as StripeObject
	const amount = Number(price.unit_amount ?? 0)
	const periodStart = Number(item?.current_period_start ?? nowSeconds())
	const periodEnd = Number(item?.current_period_end ?? nowSeconds())
	const id = stripeId('in')
	const now = nowSeconds()
	return {
		id,
		object: 'invoice',
		amount_due: amount,
		amount_overpaid: 0,
		amount_paid: paid ? amount : 0,
		amount_remaining: paid ? 0 : amount,
		amount_shipping: 0,
		attempt_count: 1,
		attempted: true,
		billing_reason: opts.billingReason ?? 'subscription_cycle',
		collection_method: 'charge_automatically',
		created: now,
		currency: price.currency ?? 'usd',
		customer: subscription.customer,
		customer_email: null,
		description: null,
		discounts: [],
		due_date: null,
		hosted_invoice_url: null,
		lines: {
			object: 'list',
			data: [
				{
					id: `il_${randomId(24)}`,
					object: 'line_item',
					amount,
					currency: price.currency ?? 'usd',
					description: `1 × ${String(price.nickname ?? price.lookup_key ?? 'plan')}`,
					invoice: id,
					livemode: false,
					metadata: {},
					parent: {
						type: 'subscription_item_details',
						invoice_item_details: null,
						subscription_item_details: {
							invoice_item: null,
							proration: false,
							proration_details: { credited_items: null },
							subscription: subscription.id,
							subscription_item: item?.id ?? null,
						},
					},
					period: { start: periodStart, end: periodEnd },
					pricing: {
						type: 'price_details',
						price_details: { price: price.id ?? null, product: price.product ?? null },
						unit_amount_decimal: String(amount),
					},
					quantity: 1,
				},
			],
			has_more: false,
			url: `/v1/invoices/${id}/lines`,
		},
		livemode: false,
		metadata: {},
		next_payment_attempt: paid ? null : now + 3 * 86_400,
		number: `${randomId(8).toUpperCase()}-0001`,
		parent: {
			type: 'subscription_details',
			quote_details: null,
			subscription_details: {
				metadata: subscription.metadata ?? {},
				subscription: subscription.id,
			},
		},
		period_end: periodEnd,
		period_start: periodStart,
		status: paid ? 'paid' : 'open',
		status_transitions: {
			finalized_at: now,
			marked_uncollectible_at: null,
			paid_at: paid ? now : null,
			voided_at: null,
		},
		subtotal: amount,
		total: amount,
		webhooks_delivered_at: null,
	}
}
