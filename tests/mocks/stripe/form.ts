// Stripe's request encoding: x-www-form-urlencoded with bracketed keys. The SDK writes arrays
// as `a[0]=x` (qs "indices" style); curl users write `a[]=x`. Both become real arrays here.

export type FormValue = string | FormValue[] | FormObject
export interface FormObject {
	[key: string]: FormValue
}

// Keys that would reach Object.prototype if used as property names.
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype'])

export function parseStripeForm(encoded: string | URLSearchParams): FormObject {
	const params = typeof encoded === 'string' ? new URLSearchParams(encoded) : encoded
	const root: FormObject = {}
	for (const [rawKey, value] of params) {
		const segments = splitKey(rawKey)
		if (!segments || segments.some((s) => FORBIDDEN.has(s))) continue
		let node: FormObject = root
		segments.forEach((segment, i) => {
			// `[]` appends: give it the next free index of this node.
			const key = segment === '' ? String(Object.keys(node).length) : segment
			if (i === segments.length - 1) {
				node[key] = value
				return
			}
			const existing = node[key]
			if (typeof existing !== 'object' || existing === null) node[key] = {}
			node = node[key] as FormObject
		})
	}
	return arrayify(root) as FormObject
}

/** `a[b][0][c]` → ['a', 'b', '0', 'c']; null when the brackets are malformed. */
function splitKey(key: string): string[] | null {
	const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key)
	if (!match?.[1]) return null
	const rest = [...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '')
	return [match[1], ...rest]
}

/** Objects whose keys are all array indices become arrays, ordered by index. */
function arrayify(value: FormValue): FormValue {
	if (typeof value === 'string' || Array.isArray(value)) return value
	const keys = Object.keys(value)
	const converted: FormObject = {}
	for (const key of keys) converted[key] = arrayify(value[key] as FormValue)
	if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
		return keys
			.map(Number)
			.sort((a, b) => a - b)
			.map((k) => converted[String(k)] as FormValue)
	}
	return converted
}

// Small typed readers for handlers (every form value arrives as a string).
export function str(value: FormValue | undefined): string | undefined {
	return typeof value === 'string' ? value : undefined
}

export function int(value: FormValue | undefined): number | undefined {
	const s = str(value)
	if (s === undefined || s === '') return undefined
	const n = Number(s)
	return Number.isInteger(n) ? n : undefined
}

export function bool(value: FormValue | undefined): boolean | undefined {
	const s = str(value)
	return s === 'true' ? true : s === 'false' ? false : undefined
}

export function obj(value: FormValue | undefined): FormObject | undefined {
	return typeof value === 'object' && !Array.isArray(value) ? value : undefined
}

export function list(value: FormValue | undefined): FormValue[] {
	if (Array.isArray(value)) return value
	return value === undefined ? [] : [value]
}

/** Stripe metadata: string values only; an empty string unsets a key. */
export function mergeMetadata(current: Record<string, string>, update: FormValue | undefined): Record<string, string> {
	const next = { ...current }
	const source = obj(update)
	if (str(update) === '') return {}
	for (const [key, value] of Object.entries(source ?? {})) {
		if (typeof value !== 'string') continue
		if (value === '') delete next[key]
		else next[key] = value
	}
	return next
}
