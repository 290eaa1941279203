import type { Writable } from 'node:stream'
import pg from 'pg'
import { cancelStatementGivenUp, QUERY_TIMED_OUT } from './cancel-statement.server.ts'

/**
 * One PostgreSQL connection in pipeline mode (pg 8.23), shared by every request for the short
 * statements each of them makes: the prepared per-request reads and the rate-limit counts
 * (docs/decisions/0026-one-pipelined-connection-for-per-request-statements.md). A statement is written
 * at once, without waiting for the answers before it or for a pooled connection, and each has its own
 * Sync, so a failing statement fails alone. Everything written in one turn of the event loop leaves in
 * one write, so PostgreSQL is woken once for all of it.
 */
export type PipelinedConnection = {
	query: <Row extends pg.QueryResultRow = pg.QueryResultRow>(config: pg.QueryConfig) => Promise<pg.QueryResult<Row>>
	close: () => Promise<void>
}

type Open = {
	client: pg.Client
	socket?: Writable
	ready: Promise<void>
	corked: boolean
	retired: boolean
	/** A statement past its timeout had the session cancelled (once: every statement in flight times out with it). */
	cancelled?: true
	/** Statement names this connection has parsed, and those whose first Parse is still unanswered. */
	prepared: Set<string>
	preparing: Set<string>
}

type Options = { queryTimeoutMs: number; connectTimeoutMs: number }

/** The severities with which PostgreSQL ends a session (an administrator, a shutdown) before closing it. */
const SESSION_ENDING = new Set(['FATAL', 'PANIC'])

export function openPipelinedConnection(connectionString: string, { queryTimeoutMs, connectTimeoutMs }: Options): PipelinedConnection {
	let current: Open | undefined
	let closing = false
	// Statements waiting for a connection still being opened when the app closes fail with this; pg
	// would not settle its connect() once ended mid-handshake.
	const closedError = () => new Error('database: the connection for per-request statements is closed')
	let announceClosed: () => void = () => {}
	const closed = new Promise<never>((_, reject) => (announceClosed = () => reject(closedError())))
	closed.catch(() => {})

	// A lost connection (server restart, failover, a query past its timeout) fails the statements in
	// flight on it; the next statement opens a new one. Statements waiting for a connection being
	// opened share it, so an outage costs one attempt at a time, not one per request.
	function retire(opened: Open, why?: string) {
		if (opened.retired) return
		opened.retired = true
		if (current === opened) current = undefined
		// Some of pg's errors (a message it did not expect) leave the socket open: nothing will use it again.
		if (opened.socket && !opened.socket.destroyed) opened.socket.destroy()
		if (why && !closing) console.error(`database: the connection for per-request statements failed: ${why}`)
	}

	function open(): Open {
		const client = new pg.Client({
			connectionString,
			pipeline: true,
			query_timeout: queryTimeoutMs,
			connectionTimeoutMillis: connectTimeoutMs,
		})
		const opened: Open = { client, corked: false, retired: false, ready: Promise.resolve(), prepared: new Set(), preparing: new Set() }
		client.on('error', (error) => retire(opened, error.message))
		client.on('end', () => retire(opened))
		const connected = client.connect().then(
			() => {
				// pg keeps its socket on `connection.stream`; corking it is what batches a turn's writes.
				opened.socket = (client as unknown as { connection: { stream: Writable } }).connection.stream
			},
			(error: unknown) => {
				// The statements that waited for it fail with this error, each to its request.
				retire(opened)
				throw error
			},
		)
		opened.ready = Promise.race([connected, closed])
		current = opened
		return opened
	}

	function send<Row extends pg.QueryResultRow>(opened: Open, config: pg.QueryConfig) {
		const socket = opened.socket!
		if (!opened.corked) {
			opened.corked = true
			socket.cork()
			setImmediate(() => {
				opened.corked = false
				socket.uncork()
			})
		}
		const name = config.name
		if (name === undefined || opened.prepared.has(name)) return run<Row>(opened, config)
		// pg sends a name's Parse once and only Bind after it. Were that first Parse to fail (a table not
		// there yet), the statements sent behind it under the name would fail too ("prepared statement
		// does not exist"), not with their own answer: until it is answered, the others go unnamed.
		if (opened.preparing.has(name)) return run<Row>(opened, { text: config.text, values: config.values })
		opened.preparing.add(name)
		return run<Row>(opened, config).then(
			(result) => (opened.preparing.delete(name), opened.prepared.add(name), result),
			(error: unknown) => {
				opened.preparing.delete(name)
				throw error
			},
		)
	}

	function run<Row extends pg.QueryResultRow>(opened: Open, config: pg.QueryConfig) {
		return opened.client.query<Row>(config).catch((error: unknown) => {
			// pg destroyed the socket; the session would go on with the statement (decision 0028).
			if ((error as Error).message === QUERY_TIMED_OUT && !opened.cancelled) {
				opened.cancelled = true
				cancelStatementGivenUp(opened.client, { connectionString }, connectTimeoutMs)
			}
			// The server answers FATAL before it closes the socket: what is sent meanwhile would fail there.
			const severity = (error as { severity?: unknown }).severity
			if (typeof severity === 'string' && SESSION_ENDING.has(severity)) retire(opened, (error as Error).message)
			throw error
		})
	}

	return {
		query<Row extends pg.QueryResultRow>(config: pg.QueryConfig) {
			if (closing) return Promise.reject(closedError())
			// A statement past its timeout makes pg destroy the socket at once, before it reports the end:
			// what comes meanwhile goes on a new connection. The timeout itself fails its own request.
			if (current?.socket?.destroyed) retire(current)
			const opened = current ?? open()
			if (opened.socket) return send<Row>(opened, config)
			return opened.ready.then(() => send<Row>(opened, config))
		},
		async close() {
			closing = true
			announceClosed()
			const opened = current
			current = undefined
			if (!opened) return
			// Still opening: end() would wait for a handshake that may never finish.
			if (!opened.socket) return void (opened.client as unknown as { connection: { stream: Writable } }).connection.stream.destroy()
			await opened.client.end().catch(() => {})
		},
	}
}
