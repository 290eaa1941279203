import pg from 'pg'

/** The message of pg's error for a statement past its `query_timeout`. */
export const QUERY_TIMED_OUT = 'Query read timeout'

type CancelConnection = NodeJS.EventEmitter & {
	connect: (port: number | string, host?: string) => void
	cancel: (processId: number, secretKey: number) => void
	stream: { destroy: () => void }
}

/**
 * A statement given up on (its query timed out) keeps running in PostgreSQL, or keeps waiting on a
 * lock, after the client closed its connection: the server notices only when it next writes. Left
 * alone, each such session holds a server connection (and whatever it locked) beyond what the app
 * counts until the wait ends. PostgreSQL's cancel request, on a connection of its own, ends it at once.
 * pg sends it this way in Client#cancel, which reads a getter pg 8.23 deprecates. It names the session
 * by its process id and secret key: a session that already ended is left alone.
 *
 * Best effort, bounded by `deadlineMs`: the request goes in plaintext, as PostgreSQL accepts it
 * whatever pg_hba requires (measured with a hostssl-only server); a pooler that takes only TLS, or
 * routes by SNI, drops it, and the session then ends when its wait does.
 */
export function cancelStatementGivenUp(client: pg.Client, options: pg.ClientConfig, deadlineMs: number) {
	const { processID, secretKey } = client as unknown as { processID?: number; secretKey?: number }
	if (processID === undefined || secretKey === undefined) return
	const canceller = new pg.Client(options) as unknown as { connection: CancelConnection; host: string; port: number }
	const { connection, host, port } = canceller
	connection.on('error', () => {})
	connection.once('connect', () => connection.cancel(processID, secretKey))
	setTimeout(() => connection.stream.destroy(), deadlineMs).unref()
	if (host?.startsWith('/')) connection.connect(`${host}/.s.PGSQL.${port}`)
	else connection.connect(port, host)
}
