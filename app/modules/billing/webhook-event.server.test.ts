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
		expect(
			parseWebhookEvent(event('evt_2', 'checkout.session.completed', { subscription: { id: 'sub_2' }, client_reference_id: 'u' }))?.target,
		).toEqual({
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

	// Each of these reached the database or the processor's URL and failed there on every retry (a
	// 500 the processor would retry for days); they are refused as not an event (400 bad-body).
	test.each([
		['an event id with a NUL byte', event('evt_\u0000', 'customer.created', {})],
		['an event id with a lone surrogate', event('evt_\ud800', 'customer.created', {})],
		['an event kind with a NUL byte', event('evt_5', 'customer.created\u0000', {})],
		['a subscription id of ..', event('evt_6', 'customer.subscription.deleted', { id: '..' })],
		['a subscription id with a lone surrogate', event('evt_7', 'customer.subscription.deleted', { id: '\ud800' })],
		['a subscription id with a slash', event('evt_8', 'customer.subscription.deleted', { id: 'sub_1/../x' })],
		['a subscription id of 20 000 characters', event('evt_9', 'customer.subscription.deleted', { id: 'a'.repeat(20_000) })],
		['an invoice naming a subscription of .', event('evt_10', 'invoice.paid', { parent: { subscription_details: { subscription: '.' } } })],
		['an older invoice naming a subscription of ..', event('evt_15', 'invoice.paid', { subscription: '..' })],
		['an empty event id', event('', 'customer.created', {})],
	])('%s is not an event', (_name, body) => {
		expect(parseWebhookEvent(body)).toBeNull()
	})
})
