import fs from 'node:fs'

// CPU time over one measured run: the server process, this process (load generator and stand-ins),
// and the whole machine (which includes PostgreSQL and anything else running), so a noisy run can
// be told from a slow server.

const TICKS_PER_SECOND = 100 // CLK_TCK on Linux

function processTicks(pid: number): number | null {
	try {
		// Fields after the command name (which may contain spaces): utime and stime are 12th and 13th.
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
		return Number(fields[11]) + Number(fields[12])
	} catch {
		return null
	}
}

function machineTicks() {
	const [, ...values] = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/)
	const numbers = values.map(Number)
	const total = numbers.reduce((sum, value) => sum + value, 0)
	const idle = (numbers[3] ?? 0) + (numbers[4] ?? 0)
	return { total, busy: total - idle }
}

export type CpuUsage = {
	/** Percent of one core. */
	serverPct: number | null
	/** This process: the autocannon worker and the stand-ins. Percent of one core. */
	benchPct: number
	/** Every core busy = 100 × cores. */
	machinePct: number
}

export function startCpuMeter(serverPid: number, cores: number): () => CpuUsage {
	const started = process.hrtime.bigint()
	const server = processTicks(serverPid)
	const self = process.cpuUsage()
	const machine = machineTicks()
	return () => {
		const seconds = Number(process.hrtime.bigint() - started) / 1e9
		const serverNow = processTicks(serverPid)
		const selfUsed = process.cpuUsage(self)
		const machineNow = machineTicks()
		const machineShare = (machineNow.busy - machine.busy) / Math.max(1, machineNow.total - machine.total)
		return {
			serverPct: server === null || serverNow === null ? null : ((serverNow - server) / TICKS_PER_SECOND / seconds) * 100,
			benchPct: ((selfUsed.user + selfUsed.system) / 1e6 / seconds) * 100,
			machinePct: machineShare * 100 * cores,
		}
	}
}
