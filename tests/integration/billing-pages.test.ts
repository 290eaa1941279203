import { describe, expect, test } from 'vitest'
import { startApp } from '../support/app-server.ts'
import { freshDatabaseUrl, withDatabase } from '../support/database.ts'
import { until } from '../support/deadline.ts'
import { postForm, postJson } from '../support/http.ts'
import { FREE_STATUS } from '../support/status-payloads.ts'
import { newClerkUserId, sessionHeaders } from '../support/sessions.ts'
import type { PrismaClient } from '../../app/generated/prisma/client.ts'
import type { StripeObject } from '../mocks/stripe.ts'
import {
	app,
	appEnv,
	auth,
	checkout,
	serveBillingApp,
	standIns,
	stored,
	subscribedUser,
	subscriptionIdFor,
} from '../support/billing-app.ts'
import { expectServerLog } from '../support/fail-on-server-error.ts'
import { formatDate } from '#app/utils/format-date.ts'

// What the pricing and account pages show of billing, and billing without processor keys.
serveBillingApp()

/** The server-rendered card of `plan` on the pricing page. */
function planCard(html: string, plan: string) {
	const start = html.indexOf(`aria-labelledby="plan-${plan}"`)
	expect(start, `no card for ${plan}`).toBeGreaterThan(-1)
	const next = html.indexOf('aria-labelledby="plan-', start + 1)
	return html.slice(start, next === -1 ? html.indexOf('</main>', start) : next)
}

describe('the pricing page for a signed-in user without a subscription', () => {
	test('marks Free as their plan; a visitor sees no plan marked', async () => {
		const userId = newClerkUserId()
		const html = await (await fetch(`${app.url}/pricing`, { headers: auth(userId) })).text()
		expect(planCard(html, 'free')).toContain('Your plan')
		expect(planCard(html, 'solo')).not.toContain('Your plan')
		expect(await (await fetch(`${app.url}/pricing`)).text()).not.toContain('Your plan')
	})
})

describe('the pricing page for a subscriber', () => {
	test('marks the plan in the period it is billed; the same plan in the other period says how to switch', async () => {
		const { userId } = await subscribedUser('team', 'year')
		const page = async (interval: string) => (await fetch(`${app.url}/pricing?interval=${interval}`, { headers: auth(userId) })).text()

		const yearly = planCard(await page('year'), 'team')
		expect(yearly).toContain('Your plan')
		// Manage billing is the summary's, above the plans (the next test), not repeated on the card.
		expect(yearly).not.toContain('Manage billing')

		const monthly = planCard(await page('month'), 'team')
		expect(monthly).not.toContain('Your plan')
		expect(monthly).not.toContain('Manage billing</button>')
		// One way to switch, the button the page shows above the plans: not a second route elsewhere.
		expect(monthly).toContain('You have Team billed yearly. To be billed monthly instead, use Manage billing, above.')
		expect(monthly).not.toContain('href="/account"')
		// Other plans do not repeat the summary's way to switch.
		for (const interval of ['month', 'year']) {
			const solo = planCard(await page(interval), 'solo')
			expect(solo).not.toContain('Manage billing')
		}
	})

	test('opens on the period they are billed in, and says once what they have, with Manage billing', async () => {
		const { userId } = await subscribedUser('studio', 'year')
		const html = await (await fetch(`${app.url}/pricing`, { headers: auth(userId) })).text()
		expect(html).toMatch(/<a aria-current="page" data-discover="true" href="\/pricing\?interval=year">/)
		expect(planCard(html, 'studio')).toContain('Your plan')
		const summary = html.slice(html.indexOf('You&#x27;re on'), html.indexOf('aria-label="Billing period"'))
		// A trial: when it ends, and what it then costs (the processor's amount, as on the account page).
		expect(summary).toMatch(/You&#x27;re on a free trial of Studio until \d{1,2} [A-Z][a-z]+ \d{4}, then \$590 a year\./)
		expect(summary).toMatch(/<input type="hidden" name="intent" value="portal"\/><button[^>]*>Manage billing<\/button>/)
		// A visitor, and a subscriber who chose a period, see the period asked for.
		expect(await (await fetch(`${app.url}/pricing`)).text()).toMatch(
			/<a aria-current="page" data-discover="true" href="\/pricing\?interval=month">/,
		)
		const monthly = await (await fetch(`${app.url}/pricing?interval=month`, { headers: auth(userId) })).text()
		expect(monthly).toMatch(/<a aria-current="page" data-discover="true" href="\/pricing\?interval=month">/)
		// The account page says what they pay, in the period they are billed: the processor's price,
		// whose amount in the fake's account ($59 a month, $590 a year) is not the plan table's ($990).
		const account = await (await fetch(`${app.url}/account`, { headers: auth(userId) })).text()
		expect(account).toContain('<dt>Plan</dt><dd>Studio</dd><dt>Price</dt><dd>$590 a year</dd>')
		// On a trial, what its end brings.
		expect(account).toMatch(
			/When the trial ends on \d{1,2} [A-Z][a-z]+ \d{4}, \$590 a year is charged automatically unless you cancel in Manage billing\./,
		)
	})
})

describe('the price on the account page', () => {
	const priceOn = async (userId: string) => {
		const response = await fetch(`${app.url}/account`, { headers: auth(userId) })
		const html = await response.text()
		expect(response.status).toBe(200)
		expect(html).toContain('<h2 id="billing-heading">Plan and billing</h2><dl class="facts"><dt>Plan</dt><dd>Team</dd>')
		return /<dt>Price<\/dt><dd>([^<]*)<\/dd>/.exec(html)?.[1]
	}

	test('is what the processor bills, quantity included; with no one amount stored, no price is shown rather than the plan table’s', async () => {
		const { userId, customer } = await subscribedUser('team', 'month')
		expect(await priceOn(userId)).toBe('$29 a month')

		// Changes an operator makes at the processor; the next event reads the subscription again.
		const subscription = standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!
		const item = (subscription.items as { data: StripeObject[] }).data[0]!
		const price = item.price as { recurring: { interval_count: number }; transform_quantity: unknown }
		const updated = async () => {
			const delivered = await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))
			expect(delivered.status).toBe(200)
			return priceOn(userId)
		}
		item.quantity = 2 // two seats of the same price
		expect(await updated()).toBe('$58 a month')
		price.recurring.interval_count = 3 // billed every three months: "a month" would be wrong
		expect(await updated()).toBeUndefined()
		price.recurring.interval_count = 1
		price.transform_quantity = { divide_by: 5, round: 'up' } // package pricing: not amount × quantity
		expect(await updated()).toBeUndefined()
		price.transform_quantity = null
		expect(await updated()).toBe('$58 a month')

		// A row stored before amounts were kept (decision 0025) shows no price until its next event:
		// the plan table's $49 would be wrong for anyone on an older price.
		const forget = (prisma: PrismaClient) =>
			prisma.$executeRawUnsafe(
				`UPDATE "Subscription" s SET "priceAmount" = NULL, "priceCurrency" = NULL FROM "User" u WHERE s."userId" = u.id AND u."clerkId" = $1`,
				userId,
			)
		expect(await stored(forget)).toBe(1)
		expect(await priceOn(userId)).toBeUndefined()
		expect(await updated()).toBe('$58 a month')
	})
})

describe('the pricing and account forms', () => {
	test('a period the page does not offer shows the monthly prices', async () => {
		for (const interval of ['weekly', 'YEAR', '']) {
			const html = await (await fetch(`${app.url}/pricing?interval=${interval}`)).text()
			expect(html, interval).toMatch(/<a aria-current="page" data-discover="true" href="\/pricing\?interval=month">/)
		}
	})

	test('an intent neither page has is answered 400 "This page was out of date", and nothing is opened', async () => {
		const userId = newClerkUserId()
		const before = standIns.stripe.store.all('checkout.session').length
		for (const path of ['/pricing', '/account']) {
			const response = await postForm(
				`${app.url}${path}`,
				{ intent: 'refund-everything', plan: 'solo' },
				{ ...auth(userId), Origin: app.url },
			)
			expect(response.status, path).toBe(400)
			expect(await response.text(), path).toContain('This page was out of date. Reload it and try again.')
		}
		expect(standIns.stripe.store.all('checkout.session')).toHaveLength(before)
	})
})

describe('without processor keys', () => {
	test('checkout, the customer portal and the webhook answer 503 processor_not_configured', async () => {
		const { STRIPE_SECRET_KEY: _s, STRIPE_WEBHOOK_SECRET: _w, ...env } = standIns.env
		const databaseUrl = await freshDatabaseUrl()
		const bare = await startApp({ DATABASE_URL: databaseUrl, ...env })
		try {
			const response = await postJson(`${bare.url}/api/billing/checkout`, { plan: 'team' }, auth(newClerkUserId()))
			expect(response.status).toBe(503)
			expect(await response.json()).toMatchObject({ code: 'processor_not_configured' })
			const portal = await postJson(`${bare.url}/api/billing/portal`, {}, auth(newClerkUserId()))
			expect(portal.status).toBe(503)
			expect(await portal.json()).toMatchObject({ code: 'processor_not_configured' })
			const hook = await postJson(`${bare.url}/api/billing/webhook`, '{}', { 'Stripe-Signature': 't=1,v1=x' })
			expect(hook.status).toBe(503)
			expect(await hook.json()).toMatchObject({ code: 'processor_not_configured' })
		} finally {
			await bare.stop()
		}
		// Answered before the account was looked up: nothing was read or made for the user (so a database
		// fault cannot turn "billing is off" into a 500 either).
		expect(await withDatabase(databaseUrl, (prisma) => prisma.user.count())).toBe(0)
	})
})

describe('a user who asked for the account to be deleted', () => {
	test('is offered no plan on /pricing, and checkout answers 409 deletion-pending from the API and the page, opening nothing', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: 'leaving@example.com' })
		const pricing = async () => (await fetch(`${app.url}/pricing`, { headers: auth(userId) })).text()
		const checkoutForm = 'name="intent" value="checkout"'
		expect(await pricing()).toContain(checkoutForm)

		const filed = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: 'leaving@example.com' }, auth(userId))
		expect(filed.status).toBe(200)
		const html = await pricing()
		expect(html).toMatch(/You asked for your account to be deleted on \d+ \w+ \d{4}, so new plans cannot be started\./)
		// The way back names the request in the contact form's subject.
		const { request_id } = (await filed.json()) as { request_id: string }
		expect(html).toContain(
			`To keep your account, <a href="/contact?subject=Keep+my+account+%28deletion+request+${request_id}%29">write to us</a>.`,
		)
		expect(html).not.toContain(checkoutForm)
		expect(html.match(/Not available while your account is due to be deleted\./g)).toHaveLength(6)

		const sessionsBefore = standIns.stripe.store.all('checkout.session').length
		const customersBefore = standIns.stripe.store.all('customer').length
		const response = await postJson(`${app.url}/api/billing/checkout`, { plan: 'solo' }, auth(userId))
		expect(response.status).toBe(409)
		expect(await response.json()).toEqual({ error: expect.any(String), code: 'deletion-pending' })
		const fromPage = await postForm(
			`${app.url}/pricing?interval=month`,
			{ intent: 'checkout', plan: 'team', interval: 'month' },
			{
				...auth(userId),
				Origin: app.url,
			},
		)
		expect(fromPage.status).toBe(409)
		expect(await fromPage.text()).toContain('You asked for your account to be deleted, so a plan cannot be started. Nothing was charged.')
		expect(standIns.stripe.store.all('checkout.session')).toHaveLength(sessionsBefore)
		expect(standIns.stripe.store.all('customer')).toHaveLength(customersBefore)
	})
})

describe("the account page's deletion section says what billing holds the request", () => {
	const accountPage = async (userId: string) => (await fetch(`${app.url}/account`, { headers: auth(userId) })).text()
	const fileAndRead = async (userId: string) => {
		const filed = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
		expect(filed.status).toBe(200)
		return accountPage(userId)
	}
	const CANCEL_FIRST = 'Cancel your subscription in Manage billing first.'
	const SETTLED = 'A person on our team will process it once your billing has settled; we will email you when it is done.'
	const NOTHING_HELD = 'A person on our team will process it; we will email you when it is done.'
	// After filing, the call to cancel stays while the subscription still renews: filing cancels nothing.
	const STILL_RENEWS =
		'Your subscription still renews and is billed until you cancel it: cancel it in Manage billing so that we can delete your account.'

	test('someone who opened checkout and left without paying is not asked to cancel a subscription they never had', async () => {
		const userId = newClerkUserId()
		standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
		expect((await checkout(userId, { plan: 'solo' })).status).toBe(200)
		const before = await accountPage(userId)
		expect(before).toContain('<dt>Status</dt><dd>No subscription</dd>')
		expect(before).not.toContain(CANCEL_FIRST)
		const after = await fileAndRead(userId)
		expect(after).toContain(NOTHING_HELD)
		expect(after).not.toContain(STILL_RENEWS)
		expect(after).not.toContain('billing has settled')
	})

	test('a subscriber is asked to cancel first, unless the subscription already ends; either way the request waits for billing', async () => {
		const renewing = await subscribedUser('solo', 'month')
		standIns.clerkApi.setUser({ id: renewing.userId, email: `${renewing.userId}@example.com` })
		expect(await accountPage(renewing.userId)).toContain(CANCEL_FIRST)
		const filedRenewing = await fileAndRead(renewing.userId)
		expect(filedRenewing).toContain(SETTLED)
		expect(filedRenewing).toContain(STILL_RENEWS)

		const ending = await subscribedUser('solo', 'month')
		standIns.clerkApi.setUser({ id: ending.userId, email: `${ending.userId}@example.com` })
		const subscription = standIns.stripe.store.get(subscriptionIdFor(ending.customer), 'subscription')!
		subscription.cancel_at_period_end = true // canceled in the customer portal, running to the period's end
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
		const page = await accountPage(ending.userId)
		expect(page).toMatch(/<dt>Ends on<\/dt>/)
		expect(page).not.toContain(CANCEL_FIRST)
		const filedEnding = await fileAndRead(ending.userId)
		expect(filedEnding).toContain(SETTLED)
		expect(filedEnding).not.toContain(STILL_RENEWS)
	})
})

describe('the pricing form and the checkout API take the same plan and period', () => {
	test('an empty period is refused by both (a period left out means monthly to both); nothing is opened', async () => {
		const userId = newClerkUserId()
		const sessionsBefore = standIns.stripe.store.all('checkout.session').length
		const api = await checkout(userId, { plan: 'team', interval: '' })
		expect(api.status).toBe(400)
		const fromPage = await postForm(
			`${app.url}/pricing`,
			{ intent: 'checkout', plan: 'team', interval: '' },
			{ ...auth(userId), Origin: app.url },
		)
		expect(fromPage.status).toBe(400)
		expect(await fromPage.text()).toContain('Please choose one of the plans below.')
		expect(standIns.stripe.store.all('checkout.session')).toHaveLength(sessionsBefore)
		// Left out: monthly, from either.
		expect((await checkout(userId, { plan: 'team' })).status).toBe(200)
		const page = await postForm(`${app.url}/pricing`, { intent: 'checkout', plan: 'team' }, { ...auth(userId), Origin: app.url })
		expect(page.status).toBe(303)
	})
})

describe('the account page shows when a subscription ends, where that comes before its period does (decision 0029)', () => {
	const accountPage = async (userId: string) => (await fetch(`${app.url}/account`, { headers: auth(userId) })).text()
	const day = (seconds: number) => formatDate(new Date(seconds * 1000).toISOString())
	const periodEnd = (subscription: StripeObject) =>
		(subscription.items as { data: Array<{ current_period_end: number }> }).data[0]!.current_period_end

	test('set in the Dashboard to end on a chosen date three days ahead: "Ends on" that date, not the trial\'s end, and no call to cancel', async () => {
		const { userId, customer } = await subscribedUser('solo')
		const subscription = standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!
		const endsAt = Math.floor(Date.now() / 1000) + 3 * 86_400
		subscription.cancel_at = endsAt
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
		const page = await accountPage(userId)
		expect(page).toContain(`<dt>Ends on</dt><dd>${day(endsAt)}</dd>`)
		expect(page).not.toContain('is charged automatically') // set to end: nothing will be charged
		// The pricing page says the same: that date, not the trial's end, and no charge to come.
		const pricing = await (await fetch(`${app.url}/pricing`, { headers: auth(userId) })).text()
		expect(pricing).toContain(`You&#x27;re on a free trial of Solo until ${day(endsAt)}; it then ends, and nothing is charged.`)
		expect(pricing).not.toContain(', then $')
		// Set to end after the trial (a date months ahead): the trial, what follows, and until when.
		subscription.cancel_at = periodEnd(subscription) + 60 * 86_400
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
		const later = await (await fetch(`${app.url}/pricing`, { headers: auth(userId) })).text()
		expect(later).toMatch(
			new RegExp(
				`You&#x27;re on a free trial of Solo until ${day(periodEnd(subscription))}, then \\$[\\d,]+ a month until it ends on ${day(subscription.cancel_at as number)}\\.`,
			),
		)
		expect(page).not.toContain('<dt>Trial ends</dt>')
		expect(page).not.toContain('Cancel your subscription in Manage billing first.')
	})

	test('resumed, and stored by an instance of the version before endsAt (a rolling deploy): the old date is not shown', async () => {
		const { userId, customer } = await subscribedUser('solo')
		const subscription = standIns.stripe.store.get(subscriptionIdFor(customer), 'subscription')!
		subscription.cancel_at = Math.floor(Date.now() / 1000) + 3 * 86_400
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
		expect(await accountPage(userId)).toContain('<dt>Ends on</dt>')
		// What that instance writes on the resume: the flag, and endsAt left as it was (its client has no such column).
		await stored((prisma) =>
			prisma.subscription.updateMany({ where: { stripeSubscriptionId: String(subscription.id) }, data: { cancelAtPeriodEnd: false } }),
		)
		const page = await accountPage(userId)
		expect(page).toContain('<dt>Trial ends</dt>')
		expect(page).not.toContain('<dt>Ends on</dt>')
		expect(page).toContain('Cancel your subscription in Manage billing first.')
	})

	test('cancelled at once: "Ended" on the day it ended, not on its period\'s end weeks ahead', async () => {
		const { userId, customer } = await subscribedUser('solo')
		const canceled = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), 'canceled')
		expect(day(periodEnd(canceled))).not.toBe(day(Number(canceled.ended_at)))
		expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.deleted', canceled))).status).toBe(200)
		const page = await accountPage(userId)
		expect(page).toContain(`<dt>Ended</dt><dd>${day(Number(canceled.ended_at))}</dd>`)
		expect(page).not.toContain(day(periodEnd(canceled)))
	})
})

describe('the account page on a subscription whose payment is due', () => {
	const accountPage = async (userId: string) => (await fetch(`${app.url}/account`, { headers: auth(userId) })).text()

	test('paused at the end of its trial for want of a payment method: the page asks for a card, not of a failed payment', async () => {
		const FAILED = 'Your last payment did not go through.'
		const PAUSED = 'Your free trial has ended without a payment method, so your plan is paused. Add a card in Manage billing to keep it.'
		for (const [processorStatus, says, never] of [
			['paused', PAUSED, FAILED],
			['past_due', FAILED, PAUSED],
		] as const) {
			const { userId, customer } = await subscribedUser('team')
			const subscription = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), processorStatus)
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
			const page = await accountPage(userId)
			expect(page, processorStatus).toContain('<dt>Plan</dt><dd>Team</dd>')
			expect(page, processorStatus).toContain(says)
			expect(page, processorStatus).not.toContain(never)
			// The pricing page's summary says the same, not "You're on Team at …".
			const pricing = await (await fetch(`${app.url}/pricing`, { headers: auth(userId) })).text()
			expect(pricing, processorStatus).toContain(
				processorStatus === 'paused'
					? 'Your free trial of Team has ended without a payment method, so the plan is paused: add a card in Manage billing to keep it.'
					: 'Your last payment for Team did not go through: update your card in Manage billing to keep it.',
			)
			expect(pricing, processorStatus).not.toContain('You&#x27;re on')
		}
	})

	test('with the account due to be deleted, the pages say the payment is due but not to keep the plan: the deletion section asks to cancel it', async () => {
		for (const [processorStatus, says] of [
			['past_due', 'Your last payment did not go through.'],
			['paused', 'Your free trial has ended without a payment method, so your plan is paused.'],
		] as const) {
			const { userId, customer } = await subscribedUser('team')
			const subscription = standIns.stripe.setSubscriptionStatus(subscriptionIdFor(customer), processorStatus)
			expect((await standIns.stripe.deliver(standIns.stripe.makeEvent('customer.subscription.updated', subscription))).status).toBe(200)
			standIns.clerkApi.setUser({ id: userId, email: `${userId}@example.com` })
			const filed = await postJson(`${app.url}/api/account/delete-request`, { confirmEmail: `${userId}@example.com` }, auth(userId))
			expect(filed.status).toBe(200)

			const page = await accountPage(userId)
			expect(page, processorStatus).toContain(`<p class="notice notice--error">${says}</p>`)
			expect(page, processorStatus).not.toMatch(/to keep (it|your plan)/)
			expect(page, processorStatus).toContain('cancel it in Manage billing so that we can delete your account.')

			const pricing = await (await fetch(`${app.url}/pricing`, { headers: auth(userId) })).text()
			// The sentence ends there; what follows is the summary's own (React marks the join with a comment).
			expect(pricing, processorStatus).toMatch(
				processorStatus === 'paused'
					? /Your free trial of Team has ended without a payment method, so the plan is paused\. (<!-- -->)?To switch/
					: /Your last payment for Team did not go through\. (<!-- -->)?To switch/,
			)
			expect(pricing, processorStatus).not.toContain('to keep it')
			expect(pricing, processorStatus).toContain('You asked for your account to be deleted on')
		}
	})
})

describe('the pricing page without processor keys', () => {
	test('says so before a plan is chosen, and shows no plan button that could only fail', async () => {
		const { STRIPE_SECRET_KEY: _s, STRIPE_WEBHOOK_SECRET: _w, ...env } = standIns.env
		const bare = await startApp({ DATABASE_URL: await freshDatabaseUrl(), ...env })
		try {
			for (const headers of [auth(newClerkUserId()), {}]) {
				const response = await fetch(`${bare.url}/pricing`, { headers })
				expect(response.status).toBe(200)
				const html = await response.text()
				const notice = html.slice(html.indexOf('<p class="notice">'), html.indexOf('aria-label="Billing period"'))
				expect(notice).toContain('Paid plans cannot be started here yet; the Free plan works as usual.')
				expect(notice).toContain('<a href="/contact">Contact support</a>')
				// No button at all: neither a trial nor a sign-in that would end in the same refusal.
				expect(html).not.toContain('value="checkout"')
				expect(html).not.toContain('Start free trial')
				expect(html).not.toContain('choosing a plan asks you to sign in')
				for (const plan of ['solo', 'team', 'studio']) {
					const card = planCard(html, plan)
					expect(card).toContain('Not available here yet.')
					expect(card).not.toContain('free trial')
				}
				expect(planCard(html, 'free')).toContain('Included with every account.')
			}
		} finally {
			await bare.stop()
		}
	})

	test('a plan button answers 503 with reassurance and somewhere to turn, not jargon', async () => {
		const { STRIPE_SECRET_KEY: _s, STRIPE_WEBHOOK_SECRET: _w, ...env } = standIns.env
		const databaseUrl = await freshDatabaseUrl()
		const bare = await startApp({ DATABASE_URL: databaseUrl, ...env })
		const actionOnly: string[] = []
		try {
			const response = await postForm(
				`${bare.url}/pricing?interval=month`,
				{ intent: 'checkout', plan: 'team', interval: 'month' },
				{ ...auth(newClerkUserId()), Origin: bare.url },
			)
			expect(response.status).toBe(503)
			const html = await response.text()
			expect(html).not.toContain('Billing is not enabled on this server')
			expect(html).toContain('Nothing was started and nothing was charged.')
			expect(html).toMatch(/role="alert"[^>]*>[^]*<a href="\/contact">Contact support<\/a>[^]*<\/p>/)
			// Manage billing, from either page, says the same (a customer made before the keys were removed).
			for (const path of ['/pricing', '/account']) {
				const portal = await postForm(`${bare.url}${path}`, { intent: 'portal' }, { ...auth(newClerkUserId()), Origin: bare.url })
				expect(portal.status, path).toBe(503)
				expect(await portal.text(), path).toContain('Paid plans cannot be started here yet. Nothing was started and nothing was charged.')
				// The action alone, as the page's script posts it (no page render after it, whose loader reads
				// the user): answered before the user's row is read or made.
				const userId = newClerkUserId()
				actionOnly.push(userId)
				const routeId = `routes${path}`
				const action = await postForm(
					`${bare.url}${path}?_data=${encodeURIComponent(routeId)}`,
					{ intent: 'portal' },
					{ ...auth(userId), Origin: bare.url },
				)
				expect(action.status, path).toBe(503)
				expect(await action.json(), path).toMatchObject({ notice: expect.stringContaining('Paid plans cannot be started here yet.') })
			}
		} finally {
			await bare.stop()
		}
		expect(await withDatabase(databaseUrl, (prisma) => prisma.user.count({ where: { clerkId: { in: actionOnly } } }))).toBe(0)
	})
})

describe('pages when the stored plan cannot be read', () => {
	test('pricing and account say so, rather than show a paying customer "Free"; the status API keeps its fallback, and logs it', async () => {
		expectServerLog(/^billing: status for \S+ fell back to free\/none: column s\.currentPeriodEnd does not exist$/)
		const databaseUrl = await freshDatabaseUrl()
		let own = await startApp({ ...appEnv, DATABASE_URL: databaseUrl })
		try {
			const userId = newClerkUserId()
			const headers = sessionHeaders(standIns.clerk, userId)
			// The user's row exists; then a column that only the plan's read needs goes missing (the
			// sign-in's user read still works, as when one query of a page fails). The app is stopped for
			// it: the embedded database is the app's own while it runs.
			expect((await fetch(`${own.url}/api/billing/status`, { headers })).status).toBe(200)
			await own.stop()
			await withDatabase(databaseUrl, (prisma) =>
				prisma.$executeRawUnsafe(`ALTER TABLE "Subscription" RENAME COLUMN "currentPeriodEnd" TO "currentPeriodEnd_away"`),
			)
			own = await startApp({ ...appEnv, DATABASE_URL: databaseUrl })

			const account = await (await fetch(`${own.url}/account`, { headers })).text()
			expect(account).toContain('We could not load your plan and billing details just now.')
			// Whether there is a subscription to cancel before asking for deletion is not known: asked, hedged.
			expect(account).toContain('If you have a subscription, cancel it in Manage billing first.')
			expect(account).not.toContain('No subscription')
			expect(account).not.toContain('See plans')
			const pricing = await (await fetch(`${own.url}/pricing`, { headers })).text()
			expect(pricing).toContain('We could not load your current plan just now')
			// The API answers the contract's fallback (200, free/none), and the error is logged (contract.md §2).
			const logged = () => own.errorOutput().match(/billing: status for \S+ fell back to free\/none/g)?.length ?? 0
			const loggedBefore = logged()
			const status = await fetch(`${own.url}/api/billing/status`, { headers })
			expect(status.status).toBe(200)
			expect(await status.json()).toEqual(FREE_STATUS)
			await until(() => logged() > loggedBefore, 5_000, 'the fallback in the log')
		} finally {
			await own.stop()
		}
	})
})

describe('what caches may keep of the pages', () => {
	test('a page or its data for a signed-in user is private, no-cache (no shared cache keeps it); the page a visitor without cookies gets is not marked', async () => {
		const { userId } = await subscribedUser()
		for (const path of ['/account', '/account?_data=routes%2Faccount', '/pricing', '/pricing?_data=routes%2Fpricing', '/contact']) {
			const response = await fetch(`${app.url}${path}`, { headers: auth(userId) })
			expect(response.status, path).toBe(200)
			expect(response.headers.get('cache-control'), path).toBe('private, no-cache')
			await response.arrayBuffer()
		}
		// What it shows is the user's: their plan on the account page.
		expect(await (await fetch(`${app.url}/account`, { headers: auth(userId) })).text()).toContain('Team')
		const visitor = await fetch(`${app.url}/pricing`)
		expect(visitor.status).toBe(200)
		expect(visitor.headers.get('cache-control')).toBeNull()
		await visitor.arrayBuffer()
		// The API's own answers keep theirs.
		expect((await fetch(`${app.url}/api/billing/status`, { headers: auth(userId) })).headers.get('cache-control')).toBe('no-store')
	})
})
