/** A date as the pages write it: "24 November 2026", in UTC so server and browser agree. */
export function formatDate(iso: string) {
	return new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })
}
