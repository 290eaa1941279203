/**
 * The user one of our checkouts was opened for, or null. Our checkout (checkout.server.ts) names the
 * user twice, as client_reference_id and as metadata.userId. A session opened anywhere else on our
 * prices names at most the first: a Payment Link takes `?client_reference_id=` from whoever writes the
 * link, so on its own it would let a stranger's purchase become another user's plan and customer.
 */
export function checkoutOpenedFor(session: { client_reference_id?: string | null; metadata?: unknown }): string | null {
	const named = session.client_reference_id
	const metadata = session.metadata
	const userId = metadata && typeof metadata === 'object' ? (metadata as Record<string, unknown>).userId : undefined
	return named && userId === named ? named : null
}
