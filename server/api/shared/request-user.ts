import type { IncomingMessage } from "node:http";

/** Who each request turned out to be (set where the credential is checked), for its access log line. */
const usersOf = new WeakMap<IncomingMessage, string>();

/** Notes the authenticated user of a request (identify() calls it), for the access log. */
export function noteRequestUser(req: IncomingMessage, userId: string): void {
  usersOf.set(req, userId);
}

/** The user noted for a request, if any. */
export const requestUserOf = (req: IncomingMessage): string | null => usersOf.get(req) ?? null;
