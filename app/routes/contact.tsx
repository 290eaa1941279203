import { json, redirect, type ActionFunctionArgs, type HeadersFunction, type LoaderFunctionArgs } from '@remix-run/node'
import { Form, useActionData, useLoaderData, useNavigation, type ClientActionFunctionArgs } from '@remix-run/react'
import { useEffect } from 'react'
import { ErrorSummary } from '#app/components/error-summary.tsx'
import { ErrorPage, orErrorPageMeta } from '#app/components/error-page.tsx'
import { CountedTextAreaField, TextField } from '#app/components/field.tsx'
import { submitContact } from '#app/modules/contact/contact.server.ts'
import { clientIp } from '#app/utils/client-ip.server.ts'
import { answersRefusal, recordRefusal, useErrorTitle } from '#app/utils/error-title.ts'
import { fieldErrors, readForm, type FieldErrors } from '#app/utils/forms.server.ts'
import { formValues } from '#app/utils/form-values.ts'
import { refusalInit } from '#app/utils/http.server.ts'
import { pageMeta } from '#app/utils/page-meta.ts'
import { passRetryAfter, waitInWords } from '#app/utils/retry-after.ts'
import { contactSchema, suggestedSubject } from '#app/utils/validation/contact.ts'
import { CONTACT_LIMITS } from '#app/utils/validation/limits.ts'
import { SubmitButton } from '#app/components/submit-button.tsx'
import { keepPageWhenUnsent, keepTypedOnNetworkFailure } from '#app/utils/network-failure.ts'

const FIELDS = ['name', 'email', 'subject', 'message'] as const
// People never see this field; bots that fill every input do. Such posts are dropped silently.
const HONEYPOT = 'website'

export const meta = orErrorPageMeta<typeof loader>(({ data }) =>
	data?.sent
		? pageMeta('Message sent', 'Your message is on its way to Callsheet support; we reply by email, usually within one business day.')
		: pageMeta(
				'Contact support',
				'Questions about plans, billing or your account? Write to Callsheet support and we reply by email, usually within one business day.',
				{ error: data?.refused },
			),
)

// Where this page's action throws, the error page is this route's, under the root's loader (see ErrorPage).
export const ErrorBoundary = ErrorPage

export const headers: HeadersFunction = passRetryAfter

export function loader({ request, context }: LoaderFunctionArgs) {
	const query = new URL(request.url).searchParams
	return json({ sent: query.get('sent') === '1', subject: suggestedSubject(query) ?? null, refused: answersRefusal(context) })
}

type ActionData = { values: Record<string, string>; errors: FieldErrors; formError?: string }

export async function action({ request, context }: ActionFunctionArgs) {
	const form = await readForm(request)
	if (form.get(HONEYPOT)) return redirect('/contact?sent=1', 303)
	const values = formValues(form, FIELDS)
	const parsed = contactSchema.safeParse(values)
	if (!parsed.success)
		return recordRefusal(context, json<ActionData>({ values, errors: fieldErrors(parsed.error) }, refusalInit({ code: 'bad-body' })))

	const result = await submitContact(parsed.data, clientIp(request, context.remoteAddress))
	if (result.status === 'ok') return redirect('/contact?sent=1', 303)
	if (result.code === 'rate-limited') {
		return recordRefusal(
			context,
			json<ActionData>(
				{
					values,
					errors: {},
					formError: `You have sent several messages in a short time. Please wait ${waitInWords(result.retryAfterSeconds)} and send again.`,
				},
				refusalInit(result),
			),
		)
	}
	return recordRefusal(
		context,
		json<ActionData>(
			{ values, errors: {}, formError: 'We could not send your message just now. It is still in the form: please try again in a moment.' },
			refusalInit(result),
		),
	)
}

export const shouldRevalidate = keepPageWhenUnsent

// With JavaScript: a send whose connection failed keeps the form and says so (see keepTypedOnNetworkFailure).
// A retry of a message that did arrive is the same message (its Message-ID: decision 0019).
export const clientAction = ({ request, serverAction }: ClientActionFunctionArgs) =>
	keepTypedOnNetworkFailure(request, serverAction<typeof action>, (typed): ActionData => ({
		values: formValues(typed, FIELDS),
		errors: {},
		formError:
			'We could not reach Callsheet, so your message may not have been sent. It is still in the form: check your connection and send it again.',
	}))

export default function ContactPage() {
	const { sent, subject } = useLoaderData<typeof loader>()
	const data = useActionData<typeof clientAction>()
	const navigation = useNavigation()
	const sending = navigation.state === 'submitting' && navigation.formAction === '/contact'
	useErrorTitle(Boolean(data))

	// After a refused send, focus the form's message; field errors focus their summary (ErrorSummary).
	useEffect(() => {
		if (data?.formError) document.getElementById('form-error')?.focus()
	}, [data])

	// After a send with JavaScript, focus moves to this heading (useFocusPageOnNavigation, root.tsx);
	// without it, the page loads with it focused (autofocus), so a screen reader starts at the result.
	if (sent && !data) {
		return (
			<div className="stack narrow">
				<h1 tabIndex={-1} autoFocus>
					Message sent
				</h1>
				<p className="notice notice--ok" role="status">
					Thank you: your message is on its way to our support team. We reply by email, usually within one business day.
				</p>
				<p>
					<a href="/contact">Send another message</a>
				</p>
			</div>
		)
	}

	const values = data?.values ?? {}
	const errors = data?.errors ?? {}
	return (
		<div className="stack narrow">
			<h1>Contact support</h1>
			<p className="lead">Questions about plans, billing or your account? Write to us and we will reply by email.</p>
			{/* Not while the message is sent again: the alert would go on claiming the last send failed. */}
			{data?.formError && !sending ? (
				<p className="notice notice--error" id="form-error" role="alert" tabIndex={-1} autoFocus>
					{data.formError}
				</p>
			) : null}
			<ErrorSummary errors={errors} fields={FIELDS} />
			<Form method="post" action="/contact" noValidate className="card stack" aria-label="Contact support">
				<p className="field__hint">All fields are required.</p>
				<TextField
					name="name"
					label="Your name"
					autoComplete="name"
					required
					maxLength={CONTACT_LIMITS.name}
					defaultValue={values.name}
					error={errors.name}
				/>
				<TextField
					name="email"
					label="Email"
					type="email"
					autoComplete="email"
					required
					defaultValue={values.email}
					error={errors.email}
					hint="We reply to this address."
				/>
				<TextField
					name="subject"
					label="Subject"
					required
					maxLength={CONTACT_LIMITS.subject}
					defaultValue={data ? values.subject : (subject ?? undefined)}
					error={errors.subject}
				/>
				<CountedTextAreaField
					name="message"
					label="Message"
					required
					rows={7}
					maxLength={CONTACT_LIMITS.message}
					defaultValue={values.message}
					error={errors.message}
				/>
				<div className="visually-hidden" aria-hidden="true">
					<label htmlFor={HONEYPOT}>Leave this field empty</label>
					<input id={HONEYPOT} name={HONEYPOT} type="text" tabIndex={-1} autoComplete="off" defaultValue="" />
				</div>
				<div>
					<SubmitButton className="button" busy={sending}>
						{sending ? 'Sending…' : 'Send message'}
					</SubmitButton>
					{/* The pressed button waits (aria-disabled) as its words change: said here too, where screen readers hear it. */}
					<span className="visually-hidden" aria-live="polite">
						{sending ? 'Sending your message…' : ''}
					</span>
				</div>
			</Form>
		</div>
	)
}
