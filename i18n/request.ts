import { headers } from "next/headers";
import { getRequestConfig } from "next-intl/server";
import { CATALOGUES } from "./catalogues";
import { negotiateLocale } from "./locales";

/**
 * The language of a server render: the browser's (`Accept-Language`). The answer pages keep it;
 * the console shell switches to the signed-in user's own setting once it is known.
 */
export default getRequestConfig(async () => {
  const locale = negotiateLocale((await headers()).get("accept-language"));
  return { locale, messages: CATALOGUES[locale] };
});
