/**
 * The query parameter with which a page learns that its form was not sent: the sign-in had to be
 * renewed first (auth.server.ts sends such a post back to the page; the GET renews it).
 */
export const SESSION_REFRESHED = { param: 'session', value: 'refreshed' } as const
