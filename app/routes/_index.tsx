import type { MetaFunction } from '@remix-run/node'

export const meta: MetaFunction = () => [
	{ title: 'Callsheet · Pre-production for film and video' },
	{
		name: 'description',
		content:
			'Callsheet brings scripts, breakdowns, shot lists and schedules together for film and video crews, from the first read to the last shooting day.',
	},
]

export default function Home() {
	return (
		<div className="stack">
			<h1>Pre-production, on one call sheet.</h1>
			<p className="lead">Callsheet brings scripts, breakdowns, shot lists and schedules together for film and video crews.</p>
			<p className="actions">
				<a className="button" href="/pricing">
					See plans and pricing
				</a>
				<a className="button button--secondary" href="/contact">
					Talk to us
				</a>
			</p>
		</div>
	)
}
