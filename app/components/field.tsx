import { forwardRef, useEffect, useRef, useState, type InputHTMLAttributes, type ReactNode, type TextareaHTMLAttributes } from 'react'
import { useHydrated } from '#app/utils/hydrated.ts'

type Common = { name: string; label: string; error?: string; hint?: ReactNode }

function describedBy(name: string, error?: string, hint?: ReactNode) {
	return [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ') || undefined
}

function Messages({ name, error, hint }: Omit<Common, 'label'>) {
	return (
		<>
			{hint ? (
				<span className="field__hint" id={`${name}-hint`}>
					{hint}
				</span>
			) : null}
			{error ? (
				<p className="field__error" id={`${name}-error`}>
					{error}
				</p>
			) : null}
		</>
	)
}

/** A labelled input whose error is announced with it (aria-describedby) and marked invalid. */
export function TextField({ name, label, error, hint, ...input }: Common & InputHTMLAttributes<HTMLInputElement>) {
	return (
		<div className="field">
			<label htmlFor={name}>{label}</label>
			<input id={name} name={name} aria-invalid={error ? true : undefined} aria-describedby={describedBy(name, error, hint)} {...input} />
			<Messages name={name} error={error} hint={hint} />
		</div>
	)
}

export const TextAreaField = forwardRef<HTMLTextAreaElement, Common & TextareaHTMLAttributes<HTMLTextAreaElement>>(function TextAreaField(
	{ name, label, error, hint, ...area },
	ref,
) {
	return (
		<div className="field">
			<label htmlFor={name}>{label}</label>
			<textarea
				ref={ref}
				id={name}
				name={name}
				aria-invalid={error ? true : undefined}
				aria-describedby={describedBy(name, error, hint)}
				{...area}
			/>
			<Messages name={name} error={error} hint={hint} />
		</div>
	)
})

const count = (n: number) => n.toLocaleString('en-US')

/**
 * A textarea with a limit the user can see: a browser cuts pasted text at maxLength without a word,
 * so the field is described by its limit, and once the page is hydrated by a live count instead.
 * Without JavaScript a count would never follow the typing: the server states the limit.
 */
export function CountedTextAreaField({
	maxLength,
	defaultValue,
	onChange,
	...field
}: Common &
	Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'maxLength' | 'defaultValue'> & { maxLength: number; defaultValue?: string }) {
	const [length, setLength] = useState((defaultValue ?? '').length)
	const hydrated = useHydrated()
	// The field may already hold more than defaultValue once the page hydrates: text the browser put
	// back on Back (form restoration) or typed before the scripts ran. Neither fires onChange.
	const area = useRef<HTMLTextAreaElement>(null)
	useEffect(() => {
		if (area.current) setLength(area.current.value.length)
	}, [])
	return (
		<TextAreaField
			{...field}
			ref={area}
			maxLength={maxLength}
			defaultValue={defaultValue}
			hint={hydrated ? `${count(length)} of ${count(maxLength)} characters` : `Up to ${count(maxLength)} characters`}
			onChange={(event) => {
				setLength(event.currentTarget.value.length)
				onChange?.(event)
			}}
		/>
	)
}
