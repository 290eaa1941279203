// Preloaded into a server under test (node --require): each SIGUSR2 steps this process's wall clock
// by TEST_CLOCK_STEP_S seconds (default -30: back, as an NTP correction or a resumed VM does), while
// the database's clock and the test's go on. Timers are not moved: only what reads Date.
const RealDate = Date
const stepMs = Number(process.env.TEST_CLOCK_STEP_S ?? -30) * 1000
let offsetMs = 0
process.on('SIGUSR2', () => {
	offsetMs += stepMs
	process.stdout.write(`test clock: stepped ${offsetMs < 0 ? 'back' : 'ahead'} to ${offsetMs / 1000} s\n`)
})
class SteppedDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(RealDate.now() + offsetMs)
		else super(...args)
	}
	static now() {
		return RealDate.now() + offsetMs
	}
}
globalThis.Date = SteppedDate
