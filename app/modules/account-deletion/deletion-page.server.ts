import { redirect } from '@remix-run/node'
import { signInUrl } from '#app/utils/auth.server.ts'
import { contactHref } from '#app/utils/contact-href.ts'
import { fieldErrors } from '#app/utils/forms.server.ts'
import { formValues } from '#app/utils/form-values.ts'
import { nullWhenFailed } from '#app/utils/null-when-failed.server.ts'
import { refusalInit } from '#app/utils/http.server.ts'
import { waitInWords } from '#app/utils/retry-after.ts'
import { deletionRequestSchema } from '#app/utils/validation/account.ts'
import { fileDeletionRequest, type UserWithPendingDeletion } from './deletion.server.ts'

// The account page's deletion form: the same domain function as POST /api/account/delete-request,
// answered as a redirect (Post/Redirect/Get) or as the page's words with the API's status.

export type DeletionRefusal = {
	notice: string | null
	/** Where to sign in again, shown after the notice when the session has ended. */
	signInHref?: string
	/** A link to support (with a subject), shown after the notice when only support can help. */
	contactHref?: string
	errors: Record<string, string>
	values: Record<string, string>
	init: ResponseInit
}

const NOTICES = {
	unauthorized: 'Your session has ended, so nothing was filed.',
	'identity-provider-unavailable': 'We could not check your email just now. Nothing was filed: please try again in a moment.',
	// Not "nothing was filed": a commit whose answer was lost may have stored it; a retry returns that request.
	'db-error': 'We could not confirm that your request was saved. Please try again in a moment: a request is never filed twice.',
} as const

/**
 * `readAccount`: the user read with their pending request (`userWithPendingDeletion`), as the API reads
 * them. `filedPath`: where a filed request lands; `accountPath`: where signing in again returns to.
 */
export async function deletionFromForm(
	readAccount: () => Promise<UserWithPendingDeletion>,
	form: URLSearchParams,
	{ filedPath, accountPath }: { filedPath: string; accountPath: string },
): Promise<Response | DeletionRefusal> {
	const values = formValues(form, ['confirmEmail', 'reason'])
	const parsed = deletionRequestSchema.safeParse(values)
	// A failed read is answered on the page: thrown, it was the generic error page, the form and what the
	// user typed were gone, and the page never said that a retry files nothing twice.
	const account = await nullWhenFailed(
		readAccount(),
		(message) => `account-deletion: the account page could not read the account: ${message}`,
	)
	// With a request already pending (filed from another tab, or a refused form posted again with
	// Back), the page shows that request and no form: a field's error would have nowhere to appear,
	// and the page would only say "Error". It shows the request instead. (The API answers as ever.)
	const showPending = () => (account?.pending ? redirect(accountPath, 303) : null)
	// The form before the database, as the API reads the body first: one that could never be filed is
	// the user's to fix (400), down or not, and is never told to retry. Unread, the account's pending
	// request cannot be shown instead: the field errors are.
	if (!parsed.success)
		return showPending() ?? { notice: null, errors: fieldErrors(parsed.error), values, init: refusalInit({ code: 'bad-body' }) }
	// The API answers this db-error too.
	if (!account) return { notice: NOTICES['db-error'], errors: {}, values, init: refusalInit({ code: 'db-error' }) }
	const result = await fileDeletionRequest(account, parsed.data)
	if (result.status === 'ok') return redirect(filedPath, 303)
	if (result.status === 'table-missing') {
		const notice = 'Account deletion cannot be requested here yet.'
		return { notice, contactHref: contactHref('Delete my account'), errors: {}, values, init: { status: 503 } }
	}
	const init = refusalInit(result)
	if ('noAccountEmail' in result) {
		const notice = 'Your account has no email address, so a request cannot be confirmed here. Nothing was filed.'
		return showPending() ?? { notice, contactHref: contactHref('Delete my account'), errors: {}, values, init }
	}
	if (result.code === 'email-mismatch') {
		return showPending() ?? { notice: null, errors: { confirmEmail: 'That is not the email address of this account.' }, values, init }
	}
	if (result.code === 'rate-limited') {
		const notice = `Too many attempts in a short time. Nothing was filed: please wait ${waitInWords(result.retryAfterSeconds)} and try again.`
		return { notice, errors: {}, values, init }
	}
	const signInHref = result.code === 'unauthorized' ? signInUrl(accountPath) : undefined
	return { notice: NOTICES[result.code], signInHref, errors: {}, values, init }
}
