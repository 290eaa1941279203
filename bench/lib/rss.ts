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
	private phases = new Set<{ peak: number }>()
	private timer: NodeJS.Timeout

	constructor(
		readonly pid: number,
		intervalMs = 200,
	) {
		this.sample()
		this.timer = setInterval(() => this.sample(), intervalMs)
		this.timer.unref()
	}

	private sample(): MemoryReading | null {
		const reading = readMemory(this.pid)
		if (!reading) return null
		this.peakMb = Math.max(this.peakMb, reading.rssMb)
		for (const phase of this.phases) phase.peak = Math.max(phase.peak, reading.rssMb)
		return reading
	}

	/** Starts a phase (phases may overlap); the returned function ends it with its peak VmRSS (MB). */
	phase(): () => number {
		const phase = { peak: 0 }
		this.phases.add(phase)
		this.sample()
		return () => {
			this.sample()
			this.phases.delete(phase)
			return phase.peak
		}
	}

	/** Current VmRSS and VmHWM (MB); also counted in the peaks. */
	now(): MemoryReading | null {
		return this.sample()
	}

	stop(): MemoryReading | null {
		const last = this.sample()
		clearInterval(this.timer)
		if (last) this.peakMb = Math.max(this.peakMb, last.hwmMb)
		return last
	}
}
