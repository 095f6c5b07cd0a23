"use client";

import { useTranslations } from "next-intl";
import { errorSentence, type TErrorAction } from "./error-sentence";

/** errorSentence in the page's language. */
export function useErrorSentence(): (error: unknown, action: TErrorAction) => string {
  const t = useTranslations("errors");
  return (error, action) => errorSentence(error, action, t);
}
