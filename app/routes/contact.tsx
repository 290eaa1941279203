import { json, redirect, type ActionFunctionArgs, type HeadersFunction, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node'
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react'
import { useEffect, useRef } from 'react'
import { TextAreaField, TextField } from '#app/components/field.tsx'
import { submitContact } from '#app/modules/contact/contact.server.ts'
import { clientIp } from '#app/utils/client-ip.server.ts'
import { fieldErrors, formValues, readForm, type FieldErrors } from '#app/utils/forms.server.ts'
import { waitInWords } from '#app/utils/retry-after.ts'
import { contactSchema } from '#app/utils/validation/contact.ts'
import { CONTACT_LIMITS } from '#app/utils/validation/limits.ts'

const FIELDS = ['name', 'email', 'subject', 'message'] as const
// People never see this field; bots that fill every input do. Such posts are dropped silently.
const HONEYPOT = 'website'

export const meta: MetaFunction = () => [{ title: 'Contact support · Callsheet' }]

// A document response takes its headers from here: pass the 429's Retry-After through.
export const headers: HeadersFunction = ({ actionHeaders }) => {
	const retryAfter = actionHeaders.get('Retry-After')
	return retryAfter ? { 'Retry-After': retryAfter } : new Headers()
}

export function loader({ request }: LoaderFunctionArgs) {
	return json({ sent: new URL(request.url).searchParams.get('sent') === '1' })
}

type ActionData = { values: Record<string, string>; errors: FieldErrors; formError?: string }

export async function action({ request, context }: ActionFunctionArgs) {
	const form = await readForm(request)
	if (form.get(HONEYPOT)) return redirect('/contact?sent=1', 303)
	const values = formValues(form, FIELDS)
	const parsed = contactSchema.safeParse(values)
	if (!parsed.success) return json<ActionData>({ values, errors: fieldErrors(parsed.error) }, { status: 400 })

	const result = await submitContact(parsed.data, clientIp(request, context.remoteAddress))
	if (result.status === 'ok') return redirect('/contact?sent=1', 303)
	if (result.code === 'rate-limited') {
		return json<ActionData>(
			{
				values,
				errors: {},
				formError: `You have sent several messages in a short time. Please wait ${waitInWords(result.retryAfterSeconds)} and send again.`,
			},
			{ status: 429, headers: { 'Retry-After': String(result.retryAfterSeconds) } },
		)
	}
	return json<ActionData>(
		{ values, errors: {}, formError: 'We could not send your message just now. It is still in the form: please try again in a moment.' },
		{ status: 500 },
	)
}

export default function ContactPage() {
	const { sent } = useLoaderData<typeof loader>()
	const data = useActionData<typeof action>()
	const navigation = useNavigation()
	const sending = navigation.state === 'submitting' && navigation.formAction === '/contact'
	const formRef = useRef<HTMLFormElement>(null)

	// After a failed submit, move focus to the first field that needs fixing (or the form's message).
	useEffect(() => {
		if (!data) return
		const first = FIELDS.find((field) => data.errors[field])
		const target = first ? formRef.current?.elements.namedItem(first) : document.getElementById('form-error')
		if (target instanceof HTMLElement) target.focus()
	}, [data])

	if (sent && !data) {
		return (
			<div className="stack">
				<h1>Message sent</h1>
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
		<div className="stack" style={{ maxWidth: '40rem' }}>
			<h1>Contact support</h1>
			<p className="lead">Questions about plans, billing or your account? Write to us and we will reply by email.</p>
			{data?.formError ? (
				<p className="notice notice--error" id="form-error" role="alert" tabIndex={-1}>
					{data.formError}
				</p>
			) : null}
			<Form method="post" action="/contact" noValidate ref={formRef} className="card stack" aria-label="Contact support">
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
					defaultValue={values.subject}
					error={errors.subject}
				/>
				<TextAreaField
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
					<button className="button" type="submit" disabled={sending} aria-disabled={sending}>
						{sending ? 'Sending…' : 'Send message'}
					</button>
				</div>
			</Form>
		</div>
	)
}
