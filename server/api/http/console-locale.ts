import type { IncomingMessage } from "node:http";
import { consoleSession, type TAuth } from "../../auth/auth";
import type { TDeps } from "../../host/deps";
import { getUserSettings } from "../../services/console/user-settings";

/**
 * The request header through which the host tells the pages (i18n/request.ts) the signed-in
 * user's own console language. Whatever a client sends under this name is dropped first.
 */
export const CONSOLE_LOCALE_HEADER = "x-countersign-console-locale";

/**
 * Pages that follow the browser's language whoever is signed in: the answer pages, single-use
 * links and the login page; and Next.js's own assets, which have no language.
 */
const BROWSER_LANGUAGE_PAGES = /^\/(?:answer\/|l\/|login(?:\/|$)|_next\/|[^/]+\.[a-z0-9]+$)/i;

/**
 * Before a console page is rendered (a document or a client navigation's RSC request), puts the
 * signed-in user's language setting (`user_settings.locale`) on the request, so the server render
 * (its `<title>`, `<html lang>` and first paint) speaks the user's language, not the browser's.
 * No session cookie, no setting, or an answer/login page: nothing is added (the browser decides).
 */
export async function markConsoleLocale(deps: Pick<TDeps, "db">, auth: TAuth, req: IncomingMessage, pathname: string): Promise<void> {
  delete req.headers[CONSOLE_LOCALE_HEADER];
  if (BROWSER_LANGUAGE_PAGES.test(pathname) || !req.headers.cookie?.includes("session_token")) return;
  const session = await consoleSession(auth, req.headers);
  if (!session) return;
  const { locale } = await getUserSettings(deps.db, session.userId);
  if (locale) req.headers[CONSOLE_LOCALE_HEADER] = locale;
}
