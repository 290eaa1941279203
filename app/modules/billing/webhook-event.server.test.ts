import { describe, expect, test } from 'vitest'
import { parseWebhookEvent } from './webhook-event.server.ts'

const event = (id: string, type: string, object: Record<string, unknown>) => JSON.stringify({ id, type, data: { object } })

describe('a verified webhook body', () => {
	test('names the subscription of each kind the webhook handles', () => {
		expect(parseWebhookEvent(event('evt_1', 'customer.subscription.updated', { id: 'sub_1' }))).toEqual({
			id: 'evt_1',
			type: 'customer.subscription.updated',
			target: { subscriptionId: 'sub_1' },
		})
		const ours = { subscription: { id: 'sub_2' }, client_reference_id: 'u', metadata: { userId: 'u' } }
		expect(parseWebhookEvent(event('evt_2', 'checkout.session.completed', ours))?.target).toEqual({
			subscriptionId: 'sub_2',
			userId: 'u',
		})
		expect(
			parseWebhookEvent(event('evt_3', 'invoice.paid', { parent: { subscription_details: { subscription: 'sub_3' } } }))?.target,
		).toEqual({
			subscriptionId: 'sub_3',
		})
		expect(parseWebhookEvent(event('evt_4', 'customer.created', {}))).toEqual({ id: 'evt_4', type: 'customer.created', target: null })
	})

	test('names a user only for a checkout opened as ours are (client_reference_id and metadata.userId the same)', () => {
		const userOf = (session: Record<string, unknown>) =>
			parseWebhookEvent(event('evt_6', 'checkout.session.completed', { subscription: 'sub_6', ...session }))?.target
		// A Payment Link on our price, with ?client_reference_id= written by whoever shared the link.
		expect(userOf({ client_reference_id: 'u' })).toEqual({ subscriptionId: 'sub_6', userId: null })
		expect(userOf({ client_reference_id: 'u', metadata: {} })).toEqual({ subscriptionId: 'sub_6', userId: null })
		expect(userOf({ client_reference_id: 'u', metadata: { userId: 'v' } })).toEqual({ subscriptionId: 'sub_6', userId: null })
		expect(userOf({ client_reference_id: null, metadata: { userId: 'u' } })).toEqual({ subscriptionId: 'sub_6', userId: null })
		expect(userOf({ client_reference_id: 'u', metadata: { userId: 'u' } })).toEqual({ subscriptionId: 'sub_6', userId: 'u' })
	})

	test('says the mode a handled event was sent in when it says one, and reads the event either way', () => {
		const withMode = (livemode: unknown) =>
			parseWebhookEvent(JSON.stringify({ id: 'evt_5', type: 'customer.subscription.deleted', livemode, data: { object: { id: 'sub_5' } } }))
		expect(withMode(true)).toEqual({
			id: 'evt_5',
			type: 'customer.subscription.deleted',
			target: { subscriptionId: 'sub_5' },
			livemode: true,
		})
		expect(withMode(false)?.livemode).toBe(false)
		// Anything but a boolean says nothing about the mode; the event is still read.
		for (const value of ['true', 1, null, {}]) {
			expect(withMode(value), JSON.stringify(value)).toMatchObject({ target: { subscriptionId: 'sub_5' }, livemode: undefined })
		}
	})

	test("reads an invoice's subscription in the shape of the endpoint's API version, older or newer", () => {
		// Before 2025-03-31 at the top level, expanded or not…
		expect(parseWebhookEvent(event('evt_11', 'invoice.payment_failed', { subscription: 'sub_11', parent: null }))?.target).toEqual({
			subscriptionId: 'sub_11',
		})
		expect(parseWebhookEvent(event('evt_12', 'invoice.paid', { subscription: { id: 'sub_12' } }))?.target).toEqual({
			subscriptionId: 'sub_12',
		})
		// …since then under parent; an invoice of no subscription (a one-off) names none.
		expect(
			parseWebhookEvent(event('evt_13', 'invoice.paid', { parent: { subscription_details: { subscription: 'sub_13' } } }))?.target,
		).toEqual({ subscriptionId: 'sub_13' })
		expect(parseWebhookEvent(event('evt_14', 'invoice.paid', { subscription: null, parent: null }))?.target).toBeNull()
	})

	test('a kind we ignore is read no further than its id and kind: 200 for ignored kinds (contract.md §2)', () => {
		expect(parseWebhookEvent(JSON.stringify({ id: 'evt_16', type: 'customer.created' }))).toEqual({
			id: 'evt_16',
			type: 'customer.created',
			target: null,
		})
		expect(parseWebhookEvent(JSON.stringify({ id: 'evt_17', type: 'product.updated', data: {} }))?.id).toBe('evt_17')
	})

	// Each of these reached the database and failed there on every retry (a 500 the processor would
	// retry for days). Of a kind we ignore, they are kept out of the ledger: nothing to record, nothing to do.
	test.each([
		['an event id with a NUL byte', event('evt_\u0000', 'customer.created', {})],
		['an event id with a lone surrogate', event('evt_\ud800', 'customer.created', {})],
		['an event kind with a NUL byte', event('evt_5', 'customer.created\u0000', {})],
		['an empty event id', event('', 'customer.created', {})],
		['no event id', JSON.stringify({ type: 'customer.created' })],
	])('%s, of a kind we ignore, is not recorded', (_name, body) => {
		expect(parseWebhookEvent(body)).toEqual({ id: null, target: null })
	})

	// Not an event (no kind), or a kind we handle without the shape the processor sends it in: 400
	// bad-body. The ids of the handled kinds reach the database and the processor's URL, where these
	// failed on every retry (a 500 the processor would retry for days).
	test.each([
		['an event id with a NUL byte, of a kind we handle', event('evt_\u0000', 'customer.subscription.updated', { id: 'sub_1' })],
		['no kind at all', JSON.stringify({ id: 'evt_18', data: { object: {} } })],
		['a kind that is not text', JSON.stringify({ id: 'evt_19', type: 42, data: { object: {} } })],
		['a subscription id of ..', event('evt_6', 'customer.subscription.deleted', { id: '..' })],
		['a subscription id with a lone surrogate', event('evt_7', 'customer.subscription.deleted', { id: '\ud800' })],
		['a subscription id with a slash', event('evt_8', 'customer.subscription.deleted', { id: 'sub_1/../x' })],
		['a subscription id of 20 000 characters', event('evt_9', 'customer.subscription.deleted', { id: 'a'.repeat(20_000) })],
		['an invoice naming a subscription of .', event('evt_10', 'invoice.paid', { parent: { subscription_details: { subscription: '.' } } })],
		['an older invoice naming a subscription of ..', event('evt_15', 'invoice.paid', { subscription: '..' })],
	])('%s is not an event', (_name, body) => {
		expect(parseWebhookEvent(body)).toBeNull()
	})
})
