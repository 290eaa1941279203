/** "about 45 seconds", "about 2 minutes": the 429 wait in words a person reads. */
export function waitInWords(seconds: number) {
	if (seconds < 60) return `about ${seconds} second${seconds === 1 ? '' : 's'}`
	const minutes = Math.ceil(seconds / 60)
	return `about ${minutes} minute${minutes === 1 ? '' : 's'}`
}
