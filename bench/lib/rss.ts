import fs from 'node:fs'

// Resident memory of one server process, from /proc/<pid>/status: VmRSS sampled every 200 ms (peak
// overall and per phase), plus the kernel's own high-water mark VmHWM.

export type MemoryReading = { rssMb: number; hwmMb: number }

export function readMemory(pid: number): MemoryReading | null {
	try {
		const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
		const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
		const rss = kb('VmRSS')
		if (!Number.isFinite(rss)) return null
		return { rssMb: rss / 1024, hwmMb: kb('VmHWM') / 1024 }
	} catch {
		return null
	}
}

export class RssSampler {
	peakMb = 0
	private phasePeak = 0
	private timer: NodeJS.Timeout

	constructor(readonly pid: number, intervalMs = 200) {
		this.sample()
		this.timer = setInterval(() => this.sample(), intervalMs)
		this.timer.unref()
	}

	private sample() {
		const reading = readMemory(this.pid)
		if (!reading) return
		this.peakMb = Math.max(this.peakMb, reading.rssMb)
		this.phasePeak = Math.max(this.phasePeak, reading.rssMb)
	}

	/** Starts a new phase; the returned function gives the phase's peak VmRSS (MB). */
	phase(): () => number {
		this.sample()
		this.phasePeak = readMemory(this.pid)?.rssMb ?? 0
		return () => {
			this.sample()
			return this.phasePeak
		}
	}

	/** Current VmRSS and VmHWM (MB); also counted in the peak. */
	now(): MemoryReading | null {
		this.sample()
		return readMemory(this.pid)
	}

	stop(): MemoryReading | null {
		const last = this.now()
		clearInterval(this.timer)
		if (last) this.peakMb = Math.max(this.peakMb, last.hwmMb)
		return last
	}
}
