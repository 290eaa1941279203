// Text fields as the person typed them, for the API and the page forms alike (client-safe).

const LINE_BREAKS = /\r\n?/g
// A UTF-16 half of a character without its other half: JSON can carry one (`"\ud83d"`), no UTF-8
// text can. Stored through Prisma it failed on every retry (500 "try again").
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g')

/**
 * Each line break as one `\n`, and each lone surrogate as U+FFFD (as an unreadable byte is shown),
 * before any length is counted. A browser posts a textarea's line breaks as CRLF, two characters,
 * while its maxlength and the page's counter count the one typed; an API client may send either.
 * One count for both, so the same message fits or not whichever way it came.
 */
export function asTyped(value: string) {
	const lines = value.includes('\r') ? value.replace(LINE_BREAKS, '\n') : value
	return LONE_SURROGATE.test(lines) ? lines.replace(LONE_SURROGATES, '\uFFFD') : lines
}
