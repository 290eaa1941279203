import { z } from 'zod'

// What the webhook reads from an event, parsed like every other input. The signature proves who sent
// the bytes, not that they hold an event we can use: a signed body that is not an event is the
// sender's fault (400 bad-body), never a 500 the processor would retry for days.

// The ids go into the database (text: no NUL) and the subscription id into the processor's URL path,
// so they are held to the processor's own alphabet: an id of `..`, a lone surrogate or a NUL byte
// failed there on every retry, a 500 for ever (found by the signed-payload fuzz test).
const processorId = z.string().regex(/^[A-Za-z0-9_]{1,255}$/)
const eventId = z.string().regex(/^[\x21-\x7e]{1,255}$/)
const eventType = z.string().regex(/^[a-z0-9_.]{1,100}$/)

const idOrExpanded = z.union([processorId, z.object({ id: processorId })]).nullish()
const idOf = (value: z.infer<typeof idOrExpanded>) => (typeof value === 'string' ? value : (value?.id ?? undefined))

const envelope = z.object({ id: eventId, type: eventType, data: z.object({ object: z.looseObject({}) }) })

const checkoutSession = z.object({ subscription: idOrExpanded, client_reference_id: z.string().nullish() })
const subscription = z.object({ id: processorId })
// Events are written in the webhook endpoint's API version, set when an operator created it, not in
// the SDK's: before 2025-03-31 an invoice named its subscription at the top level, since then under
// `parent`. Both are read, so an endpoint made on an older version still moves the status.
const invoice = z.object({
	parent: z.object({ subscription_details: z.object({ subscription: idOrExpanded }).nullish() }).nullish(),
	subscription: idOrExpanded,
})

/** The subscription an event is about, and the user it names, for the kinds the webhook handles. */
export type EventTarget = { subscriptionId: string; userId?: string | null }

export type ParsedEvent = { id: string; type: string; target: EventTarget | null }

/** Parses a verified body; null when it is not an event of the shape the processor sends. */
export function parseWebhookEvent(rawBody: string): ParsedEvent | null {
	let json: unknown
	try {
		json = JSON.parse(rawBody)
	} catch {
		return null
	}
	const event = envelope.safeParse(json)
	if (!event.success) return null
	const { id, type, data } = event.data
	const target = (): EventTarget | null | undefined => {
		switch (type) {
			case 'checkout.session.completed': {
				const object = checkoutSession.safeParse(data.object)
				if (!object.success) return undefined
				const subscriptionId = idOf(object.data.subscription)
				return subscriptionId ? { subscriptionId, userId: object.data.client_reference_id } : null
			}
			case 'customer.subscription.created':
			case 'customer.subscription.updated':
			case 'customer.subscription.deleted': {
				const object = subscription.safeParse(data.object)
				return object.success ? { subscriptionId: object.data.id } : undefined
			}
			case 'invoice.paid':
			case 'invoice.payment_failed': {
				const object = invoice.safeParse(data.object)
				if (!object.success) return undefined
				const subscriptionId = idOf(object.data.parent?.subscription_details?.subscription) ?? idOf(object.data.subscription)
				return subscriptionId ? { subscriptionId } : null
			}
			default:
				return null // a kind we ignore (Stripe retries non-2xx: it is recorded and answered 200)
		}
	}
	const found = target()
	return found === undefined ? null : { id, type, target: found }
}
