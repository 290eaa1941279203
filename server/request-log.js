// One line per request, written in batches: stdout to a pipe is a synchronous write on Linux, and a
// write per request measured as several percent of the server's CPU under load. Lines wait at most
// `flushMs`; `flush()` runs on shutdown so nothing logged is lost on a clean stop.

export function createRequestLog({ stream = process.stdout, flushMs = 100, maxPending = 16_384 } = {}) {
	let pending = ''
	let timer

	function flush() {
		if (timer) clearTimeout(timer)
		timer = undefined
		if (pending === '') return
		const chunk = pending
		pending = ''
		stream.write(chunk)
	}

	function line(text) {
		pending += `${text}\n`
		if (pending.length >= maxPending) flush()
		else if (!timer) {
			timer = setTimeout(flush, flushMs)
			timer.unref()
		}
	}

	process.once('exit', flush)
	return { line, flush }
}
