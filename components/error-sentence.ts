import { TRPCClientError } from "@trpc/client";
import { createTranslator, type useTranslations } from "next-intl";
import en from "../messages/en.json";

/**
 * What the person was doing when a call failed; it decides the second half of the sentence
 * (whether something may have been sent, and what to do next).
 */
/** What failed: a decision, an answer, a single-use link, loading a page, or a change on a list page (revoke, role, pairing, cancel). */
export type TErrorAction = "decide" | "answer" | "link" | "load" | "change";

/** The connection dropped: no answer came back at all (the request may or may not have arrived). */
export class ConnectionLostError extends Error {
  constructor() {
    super("The connection dropped before the server answered.");
    this.name = "ConnectionLostError";
  }
}

/** An answer that is not Countersign's own (a proxy's HTML error page), or a 429 from any layer. */
export class HttpAnswerError extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterSeconds: number | null,
  ) {
    super(`HTTP ${status} without a Countersign answer.`);
    this.name = "HttpAnswerError";
  }
}

const isAbort = (error: unknown): boolean => error instanceof Error && error.name === "AbortError";

/**
 * `fetch` for the tRPC client: a dropped connection and an answer that is not JSON (a proxy's
 * error page) become errors this module can name, instead of "Failed to fetch" or a JSON parser's
 * complaint about `<html>`. 429s keep their Retry-After. Cancellations pass through untouched.
 */
export function checkedFetch(base: typeof fetch = (...args) => globalThis.fetch(...args)): typeof fetch {
  return async (input, init) => {
    let res: Response;
    try {
      res = await base(input, init);
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new ConnectionLostError();
    }
    const json = (res.headers.get("content-type") ?? "").includes("json");
    if (res.status === 429 || !json) {
      const retry = Number(res.headers.get("retry-after"));
      throw new HttpAnswerError(res.status, Number.isFinite(retry) && retry > 0 ? retry : null);
    }
    return res;
  };
}

/** The translator of the `errors` messages (the page's language); English when none is given. */
export type TErrorsTranslator = ReturnType<typeof useTranslations<"errors">>;

const ENGLISH: TErrorsTranslator = createTranslator({ locale: "en", messages: en, namespace: "errors" });

/** Whether something may have been sent (so its arrival is unknown), per action. */
const SENT: Record<TErrorAction, boolean> = { decide: true, answer: true, link: true, load: false, change: true };

/** A server message that is not a sentence for people: JSON, HTML, or a parser's complaint. */
const looksRaw = (text: string): boolean => /^\s*[[{<]/.test(text) || /Unexpected (token|end of JSON)|not valid JSON|JSON\.parse|Failed to fetch|NetworkError/i.test(text);

/** The first issue of a validation error (zod's message is the issues as JSON), else the message. */
function firstIssue(message: string): string {
  if (!message.trimStart().startsWith("[")) return message;
  try {
    const issues = JSON.parse(message) as Array<{ message?: unknown }>;
    const first = Array.isArray(issues) ? issues[0]?.message : undefined;
    return typeof first === "string" ? first : "";
  } catch {
    return "";
  }
}

const sentence = (text: string): string => {
  const t = text.trim();
  return t === "" ? t : /[.!?]$/.test(t) ? t : `${t}.`;
};

/** "The edited…" → "the edited…" after a colon (an acronym such as "HTTP" stays as it is). */
const lowerFirst = (text: string): string => (/^[A-Z][a-z]/.test(text) ? `${text[0]?.toLowerCase()}${text.slice(1)}` : text);

const reloadToSee = (t: TErrorsTranslator, action: TErrorAction) =>
  SENT[action] ? t("reloadToSeeSent", { Subject: t("Subject", { action }) }) : t("reloadToSeeLoad");

/**
 * The one formatter for failed decision and answer calls: a sentence that names what happened and
 * what to do, for a proxy's error page, a dropped connection, 409, 422, 429, a malformed link and
 * the rest. Server sentences are kept when they are sentences; raw JSON or parser text never is.
 * `t`: the page's translator (`useErrorSentence()` passes it); `reason`: the server's reason code
 * (`serverText` of the error) worded in the page's language (`useServerText().reason`), null for a
 * code it does not know: then the server's sentence is shown as the server wrote it.
 */
export function errorSentence(error: unknown, action: TErrorAction, t: TErrorsTranslator = ENGLISH, reason: (code: unknown) => string | null = () => null): string {
  const sent = SENT[action];
  const subject = t("subject", { action });
  const Subject = t("Subject", { action });
  const reload = reloadToSee(t, action);
  const cause = error instanceof TRPCClientError ? error.cause : error;
  if (cause instanceof ConnectionLostError || (cause instanceof TypeError && /fetch|network|load failed/i.test(cause.message))) {
    return sent ? t("connectionSent", { subject }) : t("connectionLoad");
  }
  if (cause instanceof HttpAnswerError && cause.status !== 429) return t("proxyPage", { status: cause.status, reload });
  if (cause instanceof SyntaxError) return t("notOurs", { reload });
  const data = error instanceof TRPCClientError ? (error.data as { code?: string; httpStatus?: number; domainCode?: string | null; serverText?: unknown } | undefined) : undefined;
  const code = data?.code ?? (cause instanceof HttpAnswerError ? "TOO_MANY_REQUESTS" : null);
  const raw = error instanceof Error ? firstIssue(error.message) : "";
  // The server's reason in the page's language when it sent a code this console knows, else its English sentence.
  const worded = data?.serverText ? reason(data.serverText) : null;
  const server = worded ?? (raw !== "" && !looksRaw(raw) ? sentence(raw) : null);
  switch (code) {
    case "TOO_MANY_REQUESTS": {
      const wait = cause instanceof HttpAnswerError && cause.retryAfterSeconds ? t("waitSeconds", { n: cause.retryAfterSeconds }) : t("aFewSeconds");
      return sent ? t("tooManySent", { subject, wait }) : t("tooManyLoad", { wait });
    }
    case "CONFLICT":
      if (data?.domainCode === "already_decided") return t("decisionNotUsed", { first: server ?? t("alreadyDecided") });
      if (data?.domainCode === "expired") return t("nothingLeft", { first: server ?? t("expired") });
      if (data?.domainCode === "binding_changed") return t("decideAgain", { first: server ?? t("bindingChanged") });
      // A display name another user has: nothing to reload, another name to choose (the sentence says so).
      if (server && (data?.serverText as { code?: unknown } | undefined)?.code === "nameTaken") return server;
      return t("reloadCurrent", { first: server ?? t("changedFirst") });
    case "BAD_REQUEST":
    case "UNPROCESSABLE_CONTENT":
    case "PARSE_ERROR":
      if (action === "link" && code === "BAD_REQUEST") return t("malformedLink");
      return server ? t("notAcceptedBecause", { Subject, reason: lowerFirst(server) }) : t("notAccepted", { Subject });
    case "UNAUTHORIZED":
      return sent ? t("signedOutSent", { subject }) : t("signedOutLoad");
    case "FORBIDDEN":
      return server ?? t("forbidden");
    case "NOT_FOUND":
      return server ?? t("notFound");
    case "INTERNAL_SERVER_ERROR":
    case "SERVICE_UNAVAILABLE":
    case "TIMEOUT":
    case "GATEWAY_TIMEOUT":
    case "BAD_GATEWAY": {
      const what = code === "INTERNAL_SERVER_ERROR" || !server ? t("couldNotComplete", { status: data?.httpStatus ?? 500 }) : server;
      return t("serverTrouble", { what, reload });
    }
    default:
      return server ? t("withServer", { server, reload }) : t("somethingWrong", { reload });
  }
}
