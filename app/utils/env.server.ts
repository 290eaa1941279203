import { parsePublishableKey } from '@clerk/shared/keys'
import { z } from 'zod'
import { databaseTarget, NOT_A_DATABASE_URL } from './db/database-url.ts'

// contract.md §1 is the source of these names and defaults. Missing keys never stop start-up (the
// features that need them answer 401/503); a value that is present but malformed does, with one line
// per problem, because running on a half-understood configuration is worse than not running.

const optional = z
	.string()
	.transform((value) => value.trim())
	.transform((value) => (value === '' ? undefined : value))
	.optional()

// A URL of one of `schemes`. `named`: it must name a host (SMTP: `smtp://` alone parses, and every
// message then went to 127.0.0.1:587; a Redis client takes a URL without one as localhost). A port
// that is not a number does not parse: the message says what is expected.
const urlWithScheme = (schemes: string[], example: string, { named = false } = {}) =>
	optional.refine(
		(value) =>
			value === undefined ||
			(URL.canParse(value) && schemes.includes(new URL(value).protocol) && (!named || new URL(value).hostname !== '')),
		{
			message: `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}, ${named ? 'with a host and ' : 'with '}a numeric port if any (e.g. ${example})`,
		},
	)

/** Only scheme, host and port: a trailing slash is dropped later, anything else after the host is refused. */
function isOrigin(value: string) {
	if (!URL.canParse(value)) return true // said by the scheme's own message
	const url = new URL(value)
	return /^\/*$/.test(url.pathname) && !/[?#]/.test(value) && url.username === '' && url.password === ''
}

function credentialsDecode(url: URL) {
	try {
		decodeURIComponent(url.username)
		decodeURIComponent(url.password)
		return true
	} catch {
		return false
	}
}

// A mail address as operators write it: `local@host`, where the host may be a single label (the
// contract's own defaults are `support@localhost` and `no-reply@localhost`), optionally with a display
// name (`Callsheet <no-reply@callsheet.app>`). zod's email rule wants a dot in the domain: too strict here.
const HOST_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
const ADDRESS = `[^\\s@<>",;]+@${HOST_LABEL}(?:\\.${HOST_LABEL})*`
const MAILBOX = new RegExp(`^(?:${ADDRESS}|[^<>@]*<${ADDRESS}>)$`)
const email = (fallback: string) =>
	optional
		.refine((value) => value === undefined || MAILBOX.test(value), {
			message: 'must be an email address (e.g. support@example.com or Callsheet <support@example.com>)',
		})
		.transform((value) => value ?? fallback)

const schema = z.object({
	NODE_ENV: z.enum(['production', 'development', 'test']).catch('production'),
	PORT: optional
		.refine((value) => value === undefined || /^\d+$/.test(value), { message: 'must be a number (e.g. 3000)' })
		.transform((value) => Number(value ?? 3000))
		.refine((port) => port >= 0 && port <= 65535, { message: 'must be a port number between 0 and 65535' }),
	// The site's origin: checkout's, the portal's and sign-in's return addresses are built on it, and
	// the app serves from the root only. `…/app` sent customers to /app/account (404); a query or a
	// fragment came out inside every return address (`?ref=1/pricing?…`).
	APP_URL: urlWithScheme(['http:', 'https:'], 'https://app.example.com').refine((value) => value === undefined || isOrigin(value), {
		message:
			'must be the site’s address alone: scheme, host and port (e.g. https://app.example.com), with no path, query, fragment or user',
	}),
	DATABASE_URL: optional.refine((value) => value === undefined || URL.canParse(value), { message: NOT_A_DATABASE_URL }),
	COMMIT_SHA: optional,
	REGION: optional,
	FLY_REGION: optional,
	VERCEL_REGION: optional,
	AWS_REGION: optional,
	// Read with Clerk's own parser, as every page will read it: a key it cannot decode would otherwise
	// start cleanly and then fail every page with a 500.
	CLERK_PUBLISHABLE_KEY: optional.refine((value) => value === undefined || parsePublishableKey(value) !== null, {
		message: 'is not a Clerk publishable key (copy pk_test_… or pk_live_… from the Clerk dashboard, API keys)',
	}),
	CLERK_SECRET_KEY: optional,
	// Operators often paste a PEM with literal "\n": accept that form too.
	CLERK_JWT_KEY: optional
		.transform((value) => value?.replaceAll('\\n', '\n'))
		.refine((value) => value === undefined || value.includes('-----BEGIN PUBLIC KEY-----'), {
			message: 'must be a PEM public key (-----BEGIN PUBLIC KEY----- …)',
		}),
	CLERK_API_URL: urlWithScheme(['http:', 'https:'], 'https://api.clerk.com'),
	STRIPE_SECRET_KEY: optional,
	STRIPE_WEBHOOK_SECRET: optional,
	STRIPE_API_URL: urlWithScheme(['http:', 'https:'], 'http://127.0.0.1:12111'),
	SMTP_URL: urlWithScheme(['smtp:', 'smtps:'], 'smtp://user:pass@mail.example.com:587', { named: true }).refine(
		(value) => value === undefined || !URL.canParse(value) || credentialsDecode(new URL(value)),
		// A literal % in a password (`50%off`) failed every contact with "URI malformed" when sending.
		{ message: 'has a user or password that is not valid percent-encoding: write % as %25 (and @ : / as %40 %3A %2F)' },
	),
	// How many messages may be handed to the mail server at once (docs/decisions/0022): lower it for a
	// relay that caps concurrent connections.
	SMTP_MAX_CONNECTIONS: optional
		.refine((value) => value === undefined || (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 100), {
			message: 'must be a number of connections from 1 to 100 (e.g. 10)',
		})
		.transform((value) => Number(value ?? 10)),
	CONTACT_TO: email('support@localhost'),
	MAIL_FROM: email('no-reply@localhost'),
	TRUST_PROXY: optional
		.refine((value) => value === undefined || /^\d+$/.test(value), {
			message: 'must be the number of proxy hops to trust (0, 1, 2, …)',
		})
		.transform((value) => Number(value ?? 0)),
	REDIS_URL: urlWithScheme(['redis:', 'rediss:'], 'redis://127.0.0.1:6379', { named: true }),
	// `npm run bench` and `npm run soak` measure the paths behind the limits, not the 429 path (see
	// limitsRaisedForBench below). Not in .env.example: no deployment has a use for it.
	BENCH_RAISE_LIMITS: optional,
	// Comma-separated. An id with a space or ';' in it is a list written another way, and one in quotes
	// was quoted for a shell (docker's --env-file passes quotes on): one id that matches nobody would
	// leave the deletion requests without an administrator, so it is refused at start-up.
	ADMIN_USER_IDS: optional
		.transform(
			(value) =>
				new Set(
					(value ?? '')
						.split(',')
						.map((id) => id.trim())
						.filter(Boolean),
				),
		)
		.refine((ids) => [...ids].every((id) => !/[\s;"']/.test(id)), {
			message: 'must be Clerk user ids separated by commas (e.g. user_2abc,user_2def), with no spaces, semicolons or quotes inside an id',
		}),
})

type ParsedEnv = z.output<typeof schema>

export type Env = Omit<ParsedEnv, 'APP_URL' | 'REGION'> & {
	APP_URL: string
	REGION: string
	clerkConfigured: boolean
	stripeConfigured: boolean
	/** BENCH_RAISE_LIMITS=1 on a loopback APP_URL: every rate limit is raised, still counted (rate-limit.server.ts). */
	limitsRaisedForBench: boolean
	/** A NODE_ENV set to something else (`staging`), read as production: said at start-up. */
	nodeEnvReadAsProduction: string | undefined
}

export class InvalidEnvError extends Error {
	constructor(readonly problems: string[]) {
		super(`Invalid configuration:\n${problems.map((line) => `  ${line}`).join('\n')}`)
		this.name = 'InvalidEnvError'
	}
}

export function parseEnv(source: Record<string, string | undefined>): Env {
	const result = schema.safeParse(source)
	if (!result.success) {
		throw new InvalidEnvError(result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`))
	}
	const env = result.data
	const appUrl = (env.APP_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '')
	return {
		...env,
		APP_URL: appUrl,
		REGION: env.REGION ?? env.FLY_REGION ?? env.VERCEL_REGION ?? env.AWS_REGION ?? 'unknown',
		clerkConfigured: Boolean(env.CLERK_PUBLISHABLE_KEY && env.CLERK_SECRET_KEY),
		stripeConfigured: Boolean(env.STRIPE_SECRET_KEY),
		// Honoured only on this machine: a deployed service (public APP_URL) cannot turn its limits off by
		// configuration.
		limitsRaisedForBench: env.BENCH_RAISE_LIMITS === '1' && isLoopbackUrl(appUrl),
		nodeEnvReadAsProduction:
			source.NODE_ENV !== undefined && source.NODE_ENV !== env.NODE_ENV
				? source.NODE_ENV.replace(/[^\x20-\x7e]+/g, '?').slice(0, 40)
				: undefined,
	}
}

let current: Env | undefined

/** Validates process.env once; call at start-up so a bad value stops the process before it serves. */
export function initEnv(source: Record<string, string | undefined> = process.env): Env {
	current = parseEnv(source)
	return current
}

export function env(): Env {
	return (current ??= parseEnv(process.env))
}

/** Whether a URL names this machine: the default APP_URL, or a local run's. */
export function isLoopbackUrl(url: string) {
	const host = new URL(url).hostname
	return host === 'localhost' || host === '127.0.0.1' || host === '[::1]'
}

export function startupWarnings(config: Env): string[] {
	const warnings: string[] = []
	if (!config.clerkConfigured) {
		const missing = (['CLERK_PUBLISHABLE_KEY', 'CLERK_SECRET_KEY'] as const).filter((name) => !config[name])
		warnings.push(`${missing.join(' and ')} not set: sign-in is off; signed-in endpoints answer 401.`)
	}
	// The default APP_URL is this machine. With real keys it decides where sign-in accepts sessions
	// from and where checkout and the customer portal send customers back: said before anyone signs in.
	if ((config.clerkConfigured || config.stripeConfigured) && isLoopbackUrl(config.APP_URL))
		warnings.push(
			`APP_URL is ${config.APP_URL}: sign-in accepts sessions only from pages served there, and checkout and the customer portal return there. Set APP_URL to the public address before serving anyone else.`,
		)
	if (!config.stripeConfigured)
		warnings.push(
			'STRIPE_SECRET_KEY not set: checkout and the customer portal answer 503 processor_not_configured (401 until users can sign in).',
		)
	if (!config.STRIPE_WEBHOOK_SECRET)
		warnings.push('STRIPE_WEBHOOK_SECRET not set: the billing webhook answers 503 processor_not_configured.')
	// contract.md §1: anything but postgres(ql):// selects the embedded database. Said aloud when the
	// value names some other database (a typo such as postgress://), or instances would part ways.
	// PGlite's Node file system never flushes to disk (its fsync and fdatasync do nothing): without the
	// order of its writes kept, a power loss can lose or corrupt the database. Fine to try the app, not
	// for data anyone relies on (docs/decisions/0002).
	if (databaseTarget(config.DATABASE_URL).kind === 'embedded') {
		const typo =
			config.DATABASE_URL && !/^file:/i.test(config.DATABASE_URL) // not postgres://, and not the embedded folder's file: either
				? `DATABASE_URL is not a postgres:// URL (it starts ${config.DATABASE_URL.split(':')[0]}:): the embedded database serves instead. `
				: ''
		warnings.push(
			`${typo}The embedded database is for development and trials only: it does not flush writes to disk, so a power loss or system crash can lose or corrupt it. Set DATABASE_URL=postgres://… for real data.`,
		)
	}
	// Not refused: a `staging` deployment is common, and it serves. But React and other libraries read
	// NODE_ENV themselves, and anything but production gives them their slower development builds.
	if (config.nodeEnvReadAsProduction !== undefined)
		warnings.push(
			`NODE_ENV=${config.nodeEnvReadAsProduction} is not production, development or test: the server runs as in production, but libraries that read NODE_ENV themselves (React) take their slower development builds. Set NODE_ENV=production for every deployment, staging included.`,
		)
	// Said at every start: APP_URL's default is this machine, so a trial serving others on it with the
	// setting left over from a benchmark would have no limits at all.
	if (config.limitsRaisedForBench)
		warnings.push('BENCH_RAISE_LIMITS=1: every rate limit is raised to 1,000,000 a window, for benchmarks. Unset it before serving anyone.')
	else if (config.BENCH_RAISE_LIMITS === '1')
		warnings.push('BENCH_RAISE_LIMITS is ignored: it is honoured only when APP_URL is this machine; the rate limits apply as usual.')
	else if (config.BENCH_RAISE_LIMITS !== undefined)
		warnings.push('BENCH_RAISE_LIMITS is ignored: only 1 turns it on; the rate limits apply as usual.')
	if (!config.SMTP_URL) warnings.push('SMTP_URL not set: mail is NOT being delivered; each message is written to ./data/outbox/ instead.')
	// A key pasted into the wrong variable starts cleanly and then fails every request that needs it.
	// A warning, not a refusal: the providers' key formats are theirs to change.
	for (const [name, prefixes] of KEY_PREFIXES) {
		const value = config[name]
		if (value && !prefixes.some((prefix) => value.startsWith(prefix))) {
			warnings.push(`${name} does not look like one (expected it to start with ${prefixes.join(' or ')}): check it is not another key.`)
		}
	}
	warnings.push(...deploymentWarnings(config))
	return warnings
}

const testKey = (value: string | undefined) => value !== undefined && /^(pk|sk|rk)_test_/.test(value)
const liveKey = (value: string | undefined) => value !== undefined && /^(pk|sk|rk)_live_/.test(value)

/**
 * What starts cleanly on a public address and then misbehaves for every user: said once at start-up,
 * naming keys by their mode only (never a key).
 */
function deploymentWarnings(config: Env): string[] {
	const warnings: string[] = []
	if (isLoopbackUrl(config.APP_URL)) return warnings
	const stripeTest = testKey(config.STRIPE_SECRET_KEY)
	const clerkTest = testKey(config.CLERK_PUBLISHABLE_KEY) || testKey(config.CLERK_SECRET_KEY)
	if (stripeTest)
		warnings.push(
			`STRIPE_SECRET_KEY is a test-mode key on ${config.APP_URL}: checkout takes no real payments (fine for staging, not for customers).`,
		)
	if (clerkTest)
		warnings.push(
			`The Clerk keys are a development instance's on ${config.APP_URL}: fine for staging; customers sign in to a production instance.`,
		)
	const clerkLive = liveKey(config.CLERK_PUBLISHABLE_KEY) || liveKey(config.CLERK_SECRET_KEY)
	const stripeLive = liveKey(config.STRIPE_SECRET_KEY)
	if ((clerkLive && stripeTest) || (clerkTest && stripeLive))
		warnings.push(
			`The Clerk keys are ${clerkLive ? 'live' : 'development'} keys and STRIPE_SECRET_KEY is a ${stripeLive ? 'live' : 'test'}-mode key: check that one of them is not left over from another deployment.`,
		)
	// Behind a proxy that ends TLS the browser's pages are https://, and sign-in accepts sessions only
	// from APP_URL's origin: every signed-in request would be 401, with nothing at start-up to say why.
	if (config.clerkConfigured && new URL(config.APP_URL).protocol === 'http:')
		warnings.push(
			`APP_URL is ${config.APP_URL} (http://): sign-in accepts sessions only from pages served at that exact origin. If users reach the site over https://, set APP_URL to the https:// address or every signed-in request answers 401.`,
		)
	return warnings
}

const KEY_PREFIXES: Array<
	[keyof Env & ('CLERK_PUBLISHABLE_KEY' | 'CLERK_SECRET_KEY' | 'STRIPE_SECRET_KEY' | 'STRIPE_WEBHOOK_SECRET'), string[]]
> = [
	['CLERK_PUBLISHABLE_KEY', ['pk_']],
	['CLERK_SECRET_KEY', ['sk_']],
	['STRIPE_SECRET_KEY', ['sk_', 'rk_']],
	['STRIPE_WEBHOOK_SECRET', ['whsec_']],
]
