import { TRPCClientError } from "@trpc/client";

/**
 * What the person was doing when a call failed; it decides the second half of the sentence
 * (whether something may have been sent, and what to do next).
 */
export type TErrorAction = "decide" | "answer" | "link" | "load";

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

type TWhat = { subject: string; Subject: string; sent: boolean };
const WHAT: Record<TErrorAction, TWhat> = {
  decide: { subject: "your decision", Subject: "Your decision", sent: true },
  answer: { subject: "your answer", Subject: "Your answer", sent: true },
  link: { subject: "what you chose", Subject: "What you chose", sent: true },
  load: { subject: "the page", Subject: "The page", sent: false },
};

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

const reloadToSee = (w: TWhat) => (w.sent ? `${w.Subject} may not have arrived: reload the page to see the current state before trying again` : "Wait a moment and reload the page");

/**
 * The one formatter for failed decision and answer calls: a sentence that names what happened and
 * what to do, for a proxy's error page, a dropped connection, 409, 422, 429, a malformed link and
 * the rest. Server sentences are kept when they are sentences; raw JSON or parser text never is.
 */
export function errorSentence(error: unknown, action: TErrorAction): string {
  const w = WHAT[action];
  const cause = error instanceof TRPCClientError ? error.cause : error;
  if (cause instanceof ConnectionLostError || (cause instanceof TypeError && /fetch|network|load failed/i.test(cause.message))) {
    return w.sent
      ? `The connection to Countersign dropped before it answered, so it is not known whether ${w.subject} arrived. Check your network connection, then reload the page to see the current state before trying again.`
      : "Countersign could not be reached: the connection dropped. Check your network connection, then reload the page.";
  }
  if (cause instanceof HttpAnswerError && cause.status !== 429) {
    return `Something between you and Countersign (a proxy or gateway) answered with an error page (HTTP ${cause.status}) instead of Countersign's answer. ${reloadToSee(w)}; if this keeps happening, tell your administrator.`;
  }
  if (cause instanceof SyntaxError) {
    return `The answer that came back was not Countersign's (perhaps a proxy's error page). ${reloadToSee(w)}; if this keeps happening, tell your administrator.`;
  }
  const data = error instanceof TRPCClientError ? (error.data as { code?: string; httpStatus?: number; domainCode?: string | null } | undefined) : undefined;
  const code = data?.code ?? (cause instanceof HttpAnswerError ? "TOO_MANY_REQUESTS" : null);
  const raw = error instanceof Error ? firstIssue(error.message) : "";
  const server = raw !== "" && !looksRaw(raw) ? sentence(raw) : null;
  switch (code) {
    case "TOO_MANY_REQUESTS": {
      const wait = cause instanceof HttpAnswerError && cause.retryAfterSeconds ? `${cause.retryAfterSeconds} second${cause.retryAfterSeconds === 1 ? "" : "s"}` : "a few seconds";
      return w.sent ? `Too many requests in a short time, so Countersign did not take ${w.subject}. Wait ${wait} and try again.` : `Too many requests in a short time. Wait ${wait}, then reload the page.`;
    }
    case "CONFLICT":
      if (data?.domainCode === "already_decided") return `${server ?? "Someone decided this first."} Your decision was not used.`;
      if (data?.domainCode === "expired") return `${server ?? "This request expired."} Nothing is left to decide.`;
      if (data?.domainCode === "binding_changed") return `${server ?? "The request changed since you loaded it."} Check the request as it is now and decide again.`;
      return `${server ?? "Someone else changed this first."} Reload the page to see its current state.`;
    case "BAD_REQUEST":
    case "UNPROCESSABLE_CONTENT":
    case "PARSE_ERROR":
      if (action === "link" && code === "BAD_REQUEST") return "This link is malformed: it may have been cut short or changed on the way. Open the console and sign in to find the request instead.";
      return `${w.Subject} was not accepted${server ? `: ${lowerFirst(server)}` : "."} Correct it and try again.`;
    case "UNAUTHORIZED":
      return w.sent ? `Your sign-in has ended, so ${w.subject} was not sent. Sign in again, then try again.` : "Your sign-in has ended. Sign in again to continue.";
    case "FORBIDDEN":
      return server ?? "Your role does not allow this. Ask an administrator if you need it.";
    case "NOT_FOUND":
      return server ?? "This no longer exists. Reload the page to see what is waiting.";
    case "INTERNAL_SERVER_ERROR":
    case "SERVICE_UNAVAILABLE":
    case "TIMEOUT":
    case "GATEWAY_TIMEOUT":
    case "BAD_GATEWAY": {
      const what = code === "INTERNAL_SERVER_ERROR" || !server ? `Countersign could not complete this (HTTP ${data?.httpStatus ?? 500}).` : server;
      return `${what} ${reloadToSee(w)}; if this keeps happening, tell your administrator.`;
    }
    default:
      return server ? `${server} ${reloadToSee(w)}.` : `Something went wrong. ${reloadToSee(w)}.`;
  }
}
