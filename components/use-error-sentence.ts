"use client";

import { useTranslations } from "next-intl";
import { errorSentence, type TErrorAction } from "./error-sentence";
import { useServerText } from "./list-kit/labels";

/** errorSentence in the page's language, with the server's reason codes worded in it too. */
export function useErrorSentence(): (error: unknown, action: TErrorAction) => string {
  const t = useTranslations("errors");
  const serverText = useServerText();
  return (error, action) => errorSentence(error, action, t, serverText.reason);
}
