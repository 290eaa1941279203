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
			<section aria-labelledby="features-heading" className="stack home__features">
				<h2 id="features-heading">From the first read to the last shooting day</h2>
				<ul className="grid features">
					<li className="card">
						<h3>Breakdowns</h3>
						<p>Tag cast, props, locations and effects scene by scene, and see what every day of the shoot needs.</p>
					</li>
					<li className="card">
						<h3>Schedules</h3>
						<p>Build the stripboard from the breakdown and move scenes between days as the plan changes.</p>
					</li>
					<li className="card">
						<h3>Call sheets and exports</h3>
						<p>Send each day&apos;s call sheet and shot list to the crew, from the same schedule.</p>
					</li>
				</ul>
			</section>
		</div>
	)
}
