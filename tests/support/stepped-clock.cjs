// Preloaded into a server under test (node --require): each SIGUSR2 steps this process's wall clock
// back 30 s, as an NTP correction or a resumed VM does, while the database's clock goes on.
const RealDate = Date
let offsetMs = 0
process.on('SIGUSR2', () => {
	offsetMs -= 30_000
	process.stdout.write(`test clock: stepped back to ${offsetMs / 1000} s\n`)
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
