import type { Writable } from 'node:stream'
import pg from 'pg'

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

type Open = { client: pg.Client; socket?: Writable; ready: Promise<void>; corked: boolean; retired: boolean }

type Options = { queryTimeoutMs: number; connectTimeoutMs: number }

/** The severities with which PostgreSQL ends a session (an administrator, a shutdown) before closing it. */
const SESSION_ENDING = new Set(['FATAL', 'PANIC'])

export function openPipelinedConnection(connectionString: string, { queryTimeoutMs, connectTimeoutMs }: Options): PipelinedConnection {
	let current: Open | undefined
	let closing = false

	// A lost connection (server restart, failover, a query past its timeout) fails the statements in
	// flight on it; the next statement opens a new one. Statements waiting for a connection being
	// opened share it, so an outage costs one attempt at a time, not one per request.
	function retire(opened: Open, why?: string) {
		if (opened.retired) return
		opened.retired = true
		if (current === opened) current = undefined
		if (why && !closing) console.error(`database: the connection for per-request statements failed: ${why}`)
	}

	function open(): Open {
		const client = new pg.Client({
			connectionString,
			pipeline: true,
			query_timeout: queryTimeoutMs,
			connectionTimeoutMillis: connectTimeoutMs,
		})
		const opened: Open = { client, corked: false, retired: false, ready: Promise.resolve() }
		client.on('error', (error) => retire(opened, error.message))
		client.on('end', () => retire(opened))
		opened.ready = client.connect().then(
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
		return opened.client.query<Row>(config).catch((error: unknown) => {
			// The server answers FATAL before it closes the socket: what is sent meanwhile would fail there.
			const severity = (error as { severity?: unknown }).severity
			if (typeof severity === 'string' && SESSION_ENDING.has(severity)) retire(opened, (error as Error).message)
			throw error
		})
	}

	return {
		query<Row extends pg.QueryResultRow>(config: pg.QueryConfig) {
			if (closing) return Promise.reject(new Error('database: the connection for per-request statements is closed'))
			// A statement past its timeout makes pg destroy the socket at once, before it reports the end:
			// what comes meanwhile goes on a new connection. The timeout itself fails its own request.
			if (current?.socket?.destroyed) retire(current)
			const opened = current ?? open()
			if (opened.socket) return send<Row>(opened, config)
			return opened.ready.then(() => send<Row>(opened, config))
		},
		async close() {
			closing = true
			await current?.client.end().catch(() => {})
		},
	}
}
