import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import { freePort } from './postgres.ts'

export function hasRedis() {
	return fs.existsSync('/usr/bin/redis-server')
}

/** A throwaway redis-server on a loopback port with no persistence, stopped by the returned function. */
export async function startTestRedis({ port: chosenPort }: { port?: number } = {}): Promise<{
	url: string
	stop: () => Promise<void>
	freeze: () => void
	thaw: () => void
}> {
	const port = chosenPort ?? (await freePort())
	const child = spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
		stdio: 'ignore',
	})
	const deadline = Date.now() + 10_000
	for (;;) {
		const ok = await new Promise<boolean>((resolve) => {
			const socket = net.connect(port, '127.0.0.1', () => (socket.end(), resolve(true)))
			socket.on('error', () => resolve(false))
		})
		if (ok) break
		if (Date.now() > deadline) {
			// Nobody holds a handle to stop it: it must not outlive the failure.
			child.kill('SIGKILL')
			throw new Error('redis-server did not start')
		}
		await new Promise((r) => setTimeout(r, 50))
	}
	return {
		url: `redis://127.0.0.1:${port}`,
		stop: async () => {
			child.kill('SIGKILL')
		},
		// Stopped, not ended: its connections stay open and nothing answers on them.
		freeze: () => void child.kill('SIGSTOP'),
		thaw: () => void child.kill('SIGCONT'),
	}
}
