import nodemailer from "nodemailer";
import type { TNotifyConfig } from "./config";
import { signedHeaders } from "./sign";

/** The outcome of one delivery attempt, as the delivery log records it. */
export type TSendResult = { ok: boolean; statusCode: number | null; error: string | null };

const describeError = (error: unknown): string => {
  if (error instanceof Error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (error.name === "TimeoutError" || error.name === "AbortError") return "timed out";
    return cause?.code ? `${error.message} (${cause.code})` : error.message;
  }
  return String(error);
};

async function post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<TSendResult> {
  try {
    // Redirects are not followed: a signed body goes only to the configured URL.
    const res = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status, error: null };
    return { ok: false, statusCode: res.status, error: `HTTP ${res.status}` };
  } catch (error) {
    return { ok: false, statusCode: null, error: describeError(error) };
  }
}

/** POSTs a signed JSON body to a generic webhook. */
export function sendWebhook(url: string, secret: string, body: string, meta: { deliveryId: string; event: string; now: Date; timeoutMs: number }): Promise<TSendResult> {
  return post(url, body, { ...signedHeaders(secret, body, meta), "user-agent": "Countersign-Notifier" }, meta.timeoutMs);
}

/** POSTs a message to a Slack-compatible incoming webhook. */
export function sendSlack(url: string, message: { text: string; blocks?: unknown[] }, timeoutMs: number): Promise<TSendResult> {
  return post(url, JSON.stringify(message), { "content-type": "application/json", "user-agent": "Countersign-Notifier" }, timeoutMs);
}

/** The answer of a Slack Web API method: Slack answers HTTP 200 with `ok: false` and an error code on failure. */
export type TSlackApiResult = TSendResult & { body: Record<string, unknown> | null };

/**
 * Calls a Slack Web API method (`chat.postMessage`, `chat.update`, `views.open`, …) with the bot
 * token as Slack documents it: JSON body, `Authorization: Bearer`. Not ok on a non-2xx status
 * (a 429 names Slack's `Retry-After`) or on `ok: false` (the error is Slack's code, e.g.
 * `channel_not_found`).
 */
export async function callSlackApi(api: { apiUrl: string; botToken: string }, method: string, body: Record<string, unknown>, timeoutMs: number): Promise<TSlackApiResult> {
  try {
    const res = await fetch(`${api.apiUrl.replace(/\/+$/, "")}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${api.botToken}`, "user-agent": "Countersign-Notifier" },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text().catch(() => "");
    if (res.status < 200 || res.status >= 300) {
      const retry = res.headers.get("retry-after");
      return { ok: false, statusCode: res.status, error: `Slack ${method}: HTTP ${res.status}${retry ? ` (retry after ${retry} s)` : ""}`, body: null };
    }
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return { ok: false, statusCode: res.status, error: `Slack ${method}: the answer is not JSON`, body: null };
    }
    if (parsed?.ok !== true) return { ok: false, statusCode: res.status, error: `Slack ${method}: ${typeof parsed?.error === "string" ? parsed.error : "not ok"}`, body: parsed };
    return { ok: true, statusCode: res.status, error: null, body: parsed };
  } catch (error) {
    return { ok: false, statusCode: null, error: `Slack ${method}: ${describeError(error)}`, body: null };
  }
}

export type TMailer = { send: (mail: { to: string; subject: string; text: string; html: string }) => Promise<TSendResult>; close: () => void };

/** An SMTP mailer (nodemailer, pooled connection); null without smtp settings. */
export function createMailer(config: TNotifyConfig): TMailer | null {
  const smtp = config.smtp;
  if (!smtp) return null;
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.user ? { user: smtp.user, pass: config.smtpPassword ?? "" } : undefined,
    connectionTimeout: config.timeoutMs,
    greetingTimeout: config.timeoutMs,
    socketTimeout: config.timeoutMs,
  });
  return {
    send: async (mail) => {
      try {
        const info = await transport.sendMail({ from: smtp.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
        if (info.rejected.length > 0) return { ok: false, statusCode: null, error: `rejected by the SMTP server: ${String(info.response ?? "")}` };
        return { ok: true, statusCode: 250, error: null };
      } catch (error) {
        const code = (error as { responseCode?: number }).responseCode;
        return { ok: false, statusCode: typeof code === "number" ? code : null, error: describeError(error) };
      }
    },
    close: () => transport.close(),
  };
}
