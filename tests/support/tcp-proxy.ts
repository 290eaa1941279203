import net from 'node:net'

export type TcpProxy = {
	port: number
	/** From now on nothing passes in either direction and nothing is closed: a network that drops packets. */
	freeze: () => void
	thaw: () => void
	close: () => Promise<void>
}

/** Forwards TCP connections to `target`, until frozen (a partitioned network, not a stopped server). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
	let frozen = false
	const sockets = new Set<net.Socket>()
	const track = (socket: net.Socket) => {
		sockets.add(socket)
		socket.on('close', () => sockets.delete(socket))
		socket.on('error', () => socket.destroy())
	}
	// Half-open allowed: a stopped host's kernel takes the app's FIN and never answers with its own, so
	// a frozen proxy must not end its side by itself (Node's default) either.
	const server = net.createServer({ allowHalfOpen: true }, (client) => {
		track(client)
		client.on('end', () => frozen || client.end())
		const upstream = net.connect(target.port, target.host)
		track(upstream)
		client.on('data', (chunk) => frozen || upstream.write(chunk))
		upstream.on('data', (chunk) => frozen || client.write(chunk))
		// While frozen a close is dropped like everything else.
		client.on('close', () => frozen || upstream.destroy())
		upstream.on('close', () => frozen || client.destroy())
	})
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
	return {
		port: (server.address() as net.AddressInfo).port,
		freeze: () => (frozen = true),
		thaw: () => {
			frozen = false
			// Connections that lived through the freeze lost bytes: they are of no use to anyone now.
			for (const socket of sockets) socket.destroy()
		},
		close: async () => {
			for (const socket of sockets) socket.destroy()
			await new Promise((resolve) => server.close(resolve))
		},
	}
}
