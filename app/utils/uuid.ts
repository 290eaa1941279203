/**
 * Whether a value has the shape of our row ids (PostgreSQL uuids). Checked before a lookup by id that
 * comes from outside (a form, processor metadata): PostgreSQL refuses a malformed uuid with an error,
 * which would otherwise surface as a 500 instead of "not found".
 */
export function looksLikeUuid(value: unknown): value is string {
	return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)
}
