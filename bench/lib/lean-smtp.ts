import { listenOnLoopback } from '../../tests/mocks/http-util.ts'
import { SMTPServer } from 'smtp-server'

// The benchmark's mail server: accepts every message and throws it away, without parsing it (the test
// sink parses each message with mailparser in this process, which would make the sink, not the app,
// the bottleneck of POST /api/contact). Counts what it accepted so the run can check delivery.

export type LeanSmtp = { url: string; accepted: () => number; close: () => Promise<void> }

export async function startLeanSmtp(): Promise<LeanSmtp> {
	let accepted = 0
	const server = new SMTPServer({
		authOptional: true,
		disabledCommands: ['STARTTLS'],
		allowInsecureAuth: true,
		disableReverseLookup: true,
		closeTimeout: 100,
		logger: false,
		onData(stream, _session, callback) {
			stream.on('end', () => {
				accepted++
				callback()
			})
			stream.resume()
		},
	})
	const { port, sockets } = await listenOnLoopback(server, server.server)
	let closing: Promise<void> | undefined
	return {
		url: `smtp://127.0.0.1:${port}`,
		accepted: () => accepted,
		close() {
			closing ??= new Promise<void>((resolve) => {
				server.close(() => resolve())
				for (const socket of sockets) socket.destroy()
			})
			return closing
		},
	}
}
