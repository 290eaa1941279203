/**
 * The fields of a form as typed, each a string ('' when left out): what a refused form is shown again
 * with. Client-safe: the pages' actions read a posted form with it, and their clientActions the form
 * a failed connection never delivered.
 */
export function formValues(form: { get(name: string): FormDataEntryValue | null }, fields: readonly string[]): Record<string, string> {
	return Object.fromEntries(fields.map((field) => [field, String(form.get(field) ?? '')]))
}
