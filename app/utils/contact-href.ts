/**
 * A link to the contact page with its subject filled in (the contact page reads `subject`): the
 * visitor does not have to say again what the page they came from knows, such as a request's reference.
 */
export function contactHref(subject: string): string {
	return `/contact?${new URLSearchParams({ subject })}`
}

/** Support, asked to withdraw a pending deletion request: the subject names the request. */
export function keepAccountHref(requestId: string): string {
	return contactHref(`Keep my account (deletion request ${requestId})`)
}
