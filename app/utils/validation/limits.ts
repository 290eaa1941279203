// Field limits the pages show in the browser (maxLength, character counters). Kept free of zod so the
// forms do not ship the schema library to the browser; the schemas import them from here.
export const CONTACT_LIMITS = { name: 200, subject: 500, message: 10_000 } as const
export const DELETION_REASON_MAX = 2000
