import type { ButtonHTMLAttributes } from 'react'

type Props = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'type' | 'disabled' | 'aria-disabled'> & {
	/** A form of the page is on its way: the button refuses presses until it is answered. */
	busy: boolean
}

/**
 * A submit button that waits while a form is on its way. Not `disabled`: a button disabled under the
 * keyboard's focus drops it to the top of the page, and a screen reader loses its place (the next Tab
 * goes to the skip link). `aria-disabled` tells assistive technology the same, and a press is refused
 * here (Enter in a field presses the form's submit button too, so it is refused as well). Without
 * JavaScript nothing is ever busy: the browser's own navigation shows the wait.
 */
export function SubmitButton({ busy, onClick, ...props }: Props) {
	return (
		<button
			{...props}
			type="submit"
			aria-disabled={busy || undefined}
			onClick={(event) => {
				if (busy) event.preventDefault()
				else onClick?.(event)
			}}
		/>
	)
}
