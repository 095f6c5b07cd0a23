import { headers } from "next/headers";
import { getRequestConfig } from "next-intl/server";
import { CATALOGUES } from "./catalogues";
import { isLocale, negotiateLocale } from "./locales";

/** Set by the host (server/api/http/console-locale.ts) on console pages of a user who chose a language. */
const CONSOLE_LOCALE_HEADER = "x-countersign-console-locale";

/**
 * The language of a server render: on a console page, the signed-in user's own setting when it
 * has one (the host puts it on the request); otherwise, and always on the answer, link and login
 * pages, the browser's (`Accept-Language`). Page titles (`generateMetadata`) follow it too.
 */
export default getRequestConfig(async () => {
  const h = await headers();
  const chosen = h.get(CONSOLE_LOCALE_HEADER);
  const locale = isLocale(chosen) ? chosen : negotiateLocale(h.get("accept-language"));
  return { locale, messages: CATALOGUES[locale] };
});
