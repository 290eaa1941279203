import type { AddressInfo, Socket } from 'node:net'
import { SMTPServer } from 'smtp-server'

// The benchmark's mail server: accepts every message and throws it away, without parsing it (the test
// sink parses each message with mailparser in this process, which would make the sink, not the app,
// the bottleneck of POST /api/contact). Counts what it accepted so the run can check delivery.

export type LeanSmtp = { url: string; accepted: () => number; close: () => Promise<void> }

export async function startLeanSmtp(): Promise<LeanSmtp> {
	let accepted = 0
	const sockets = new Set<Socket>()
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
	server.server.on('connection', (socket: Socket) => {
		sockets.add(socket)
		socket.on('close', () => sockets.delete(socket))
	})
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject)
		server.listen(0, '127.0.0.1', () => resolve())
	})
	const { port } = server.server.address() as AddressInfo
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
