import type { MetaDescriptor } from '@remix-run/node'

/**
 * A page's <title> and description. In Remix v2 a route's meta replaces its parents', so every page
 * gives both. `error`: the page answers a refused form, and the title says so first ("Error: …"),
 * which is what a screen reader reads when the answer loads without JavaScript.
 */
export function pageMeta(title: string, description: string, opts: { error?: boolean } = {}): MetaDescriptor[] {
	return [{ title: `${opts.error ? 'Error: ' : ''}${title} · Callsheet` }, { name: 'description', content: description }]
}
