import { useNavigation } from '@remix-run/react'

/**
 * The form data being submitted right now (undefined when nothing is): lets a page disable only the
 * form that is busy, e.g. `usePendingSubmission()?.get('intent') === 'portal'`. A link followed
 * meanwhile is not a submission and disables nothing.
 */
export function usePendingSubmission(): FormData | undefined {
	const navigation = useNavigation()
	return navigation.state === 'idle' ? undefined : navigation.formData
}
