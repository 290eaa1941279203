/**
 * The status a user without a subscription gets, written out as the interface states it (section 2
 * and 4.4): also the fallback payload when the stored plan cannot be read.
 */
export const FREE_STATUS = {
	plan: 'free',
	status: 'none',
	credits_daily: 20,
	current_period_end: null,
	processor_customer_id: null,
	has_subscription: false,
} as const
