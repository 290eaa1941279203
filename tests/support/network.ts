import os from 'node:os'

/** An IPv4 address of this machine other than loopback, if it has one: where another machine on its network connects. */
export function externalIPv4(): string | undefined {
	return Object.values(os.networkInterfaces())
		.flat()
		.find((address) => address?.family === 'IPv4' && !address.internal)?.address
}
