"use client";

import { TRPCClientError } from "@trpc/client";
import type { TErrorAction } from "../error-sentence";
import { useErrorSentence } from "../use-error-sentence";

/** The refusals whose sentence the server wrote for this page's reader: shown as they come. */
const OWN_SENTENCE = new Set(["conflict", "not_found", "validation_failed"]);

/** The server's own sentence of a refusal it explains (a 409, 404 or 422 of the policy procedures), else null. */
export function serverSentenceOf(error: unknown): string | null {
  if (!(error instanceof TRPCClientError)) return null;
  const domainCode = (error.data as { domainCode?: string | null } | undefined)?.domainCode ?? "";
  const text = error.message.trim();
  return OWN_SENTENCE.has(domainCode) && text !== "" && !/^\s*[[{<]/.test(text) ? text : null;
}

/** A failed call as a sentence: the server's own when it wrote one for this case, else the console's (errorSentence). */
export function usePolicyErrorSentence(): (error: unknown, action: TErrorAction) => string {
  const errorSentence = useErrorSentence();
  return (error, action) => serverSentenceOf(error) ?? errorSentence(error, action);
}
