import { z } from 'zod'
import { INTERVALS, PAID_PLANS } from '#app/modules/billing/plans.ts'

export const checkoutSchema = z.object({
	plan: z.enum(PAID_PLANS, { error: `plan must be one of ${PAID_PLANS.join(', ')}.` }),
	// Optional: absent or null means the default, as an optional `reason` does on the deletion request.
	interval: z
		.enum(INTERVALS, { error: 'interval must be month or year.' })
		.nullish()
		.transform((interval) => interval ?? 'month'),
})

export type CheckoutRequest = z.output<typeof checkoutSchema>

/** The pricing page's `?interval=`: anything but a known period shows the monthly prices. */
export const intervalParamSchema = z.enum(INTERVALS).catch('month')
