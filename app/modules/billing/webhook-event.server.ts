import { z } from 'zod'
import { checkoutOpenedFor } from './checkout-opened-for.ts'

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

// A handled kind's `type` is already known to be one of HANDLED_KINDS: its id and object are what is
// left, and its mode, when it says one (anything but a boolean is read as not saying).
const envelope = z.object({
	id: eventId,
	livemode: z.boolean().optional().catch(undefined),
	data: z.object({ object: z.looseObject({}) }),
})
// contract.md §2 answers 200 for ignored kinds, so a kind we ignore is read no further than this: it
// needs no `data.object`, and an id or kind outside the alphabets above only keeps it out of the ledger.
const anyKind = z.object({ type: z.string() })
const ledgerEntry = z.object({ id: eventId, type: eventType })

const checkoutSession = z.object({
	subscription: idOrExpanded,
	client_reference_id: z.string().nullish(),
	metadata: z.unknown().optional(),
})
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

/** Reads an event's object: its target, null when it names no subscription, undefined when malformed. */
type TargetReader = (object: unknown) => EventTarget | null | undefined

const fromSubscription: TargetReader = (object) => {
	const parsed = subscription.safeParse(object)
	return parsed.success ? { subscriptionId: parsed.data.id } : undefined
}
const fromInvoice: TargetReader = (object) => {
	const parsed = invoice.safeParse(object)
	if (!parsed.success) return undefined
	const subscriptionId = idOf(parsed.data.parent?.subscription_details?.subscription) ?? idOf(parsed.data.subscription)
	return subscriptionId ? { subscriptionId } : null
}

/** The kinds the webhook handles (contract.md §2), each with how its object names a subscription. */
const HANDLED_KINDS = new Map<string, TargetReader>([
	[
		'checkout.session.completed',
		(object) => {
			const parsed = checkoutSession.safeParse(object)
			if (!parsed.success) return undefined
			const subscriptionId = idOf(parsed.data.subscription)
			return subscriptionId ? { subscriptionId, userId: checkoutOpenedFor(parsed.data) } : null
		},
	],
	['customer.subscription.created', fromSubscription],
	['customer.subscription.updated', fromSubscription],
	['customer.subscription.deleted', fromSubscription],
	['invoice.paid', fromInvoice],
	['invoice.payment_failed', fromInvoice],
])

/**
 * An event to record under its id, or (id null) one of a kind we ignore that cannot be recorded: no
 * usable id or kind, so a repeat cannot be told apart, and nothing would be done with it anyway.
 */
export type ParsedEvent =
	{ id: string; type: string; target: EventTarget | null; livemode?: boolean } | { id: null; target: null; livemode?: undefined }

/**
 * Parses a verified body; null when it is not an event (no kind), or is one of a kind we handle
 * without the shape the processor sends it in.
 */
export function parseWebhookEvent(rawBody: string): ParsedEvent | null {
	let json: unknown
	try {
		json = JSON.parse(rawBody)
	} catch {
		return null
	}
	const kind = anyKind.safeParse(json)
	if (!kind.success) return null
	const targetOf = HANDLED_KINDS.get(kind.data.type)
	if (!targetOf) {
		const entry = ledgerEntry.safeParse(json)
		return entry.success ? { id: entry.data.id, type: entry.data.type, target: null } : { id: null, target: null }
	}
	const event = envelope.safeParse(json)
	if (!event.success) return null
	const found = targetOf(event.data.data.object)
	return found === undefined ? null : { id: event.data.id, type: kind.data.type, target: found, livemode: event.data.livemode }
}
