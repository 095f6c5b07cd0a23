import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { type Context, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { TObserve } from "../../observe/port";
import { endOnce, SPAN, startSpan } from "../../observe/spans";
import { requestUserOf } from "../shared/request-user";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZEROS_32 = "0".repeat(32);
const ZEROS_16 = "0".repeat(16);

/** A W3C `traceparent` header (version 00) as a remote parent, or null when absent or malformed. */
export function parseTraceparent(header: string | string[] | undefined): { traceId: string; spanId: string; traceFlags: number } | null {
  const value = Array.isArray(header) ? header[0] : header;
  const m = value?.trim().toLowerCase().match(TRACEPARENT);
  if (!m || m[1] === ZEROS_32 || m[2] === ZEROS_16) return null;
  return { traceId: m[1] as string, spanId: m[2] as string, traceFlags: Number.parseInt(m[3] as string, 16) & TraceFlags.SAMPLED };
}

/** Query parameters whose values are credentials or one-time secrets: left out of the logged path. */
const SECRET_PARAM = /token|key|secret|password|passwd|signature|sig$|^code$|auth|session|cookie|credential/i;

/** The path with its query string, minus the parameters that may carry secrets. */
export function loggedPath(url: URL): string {
  const kept = [...url.searchParams].filter(([name]) => !SECRET_PARAM.test(name));
  if (kept.length === 0) return url.pathname;
  return `${url.pathname}?${new URLSearchParams(kept).toString()}`;
}

/**
 * Starts the access record of one request: the request id (the trace id of an incoming
 * `traceparent`, else a new one), echoed as `x-request-id`; the server span (a child of that
 * parent; a no-op when tracing is off); and, when the response is done, one log line with the
 * request id, method, path (secret query parameters dropped), user id, status and duration. No
 * header, cookie or body is logged. Returns the context to run the request's handler in.
 */
export function beginRequest(deps: { log: Logger; observe: TObserve }, req: IncomingMessage, res: ServerResponse, url: URL): Context {
  const started = process.hrtime.bigint();
  const incoming = parseTraceparent(req.headers.traceparent);
  const parent = incoming ? trace.setSpanContext(ROOT_CONTEXT, { ...incoming, isRemote: true }) : ROOT_CONTEXT;
  const server = startSpan(deps.observe.tracer, SPAN.request, parent, { "http.request.method": req.method ?? "GET", "url.path": url.pathname }, { kind: SpanKind.SERVER });
  const spanTrace = server.span.spanContext().traceId;
  const requestId = incoming?.traceId ?? (deps.observe.tracing && spanTrace !== ZEROS_32 ? spanTrace : randomBytes(16).toString("hex"));
  res.setHeader("x-request-id", requestId);
  let logged = false;
  const done = () => {
    if (logged) return;
    logged = true;
    const status = res.headersSent ? res.statusCode : 0;
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    const userId = requestUserOf(req);
    server.span.setAttribute("http.response.status_code", status);
    if (userId) server.span.setAttribute("countersign.user_id", userId);
    endOnce(server.span, res.writableFinished ? "completed" : "aborted");
    deps.log.info({ access: true, requestId, method: req.method, path: loggedPath(url), userId, status, durationMs: Math.round(durationMs * 10) / 10 }, "request");
  };
  res.once("finish", done);
  res.once("close", done);
  return server.context;
}

/** The status of an HTTP status line at the start of a chunk written to an upgrading socket (0: none). */
function handshakeStatus(chunk: unknown): number {
  const head = typeof chunk === "string" ? chunk.slice(0, 16) : Buffer.isBuffer(chunk) ? chunk.subarray(0, 16).toString("latin1") : "";
  return Number(head.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0);
}

/**
 * The access record of a WebSocket upgrade (`/v1/live`, `/v1/devices/connect`): one log line
 * when its socket closes, with the same fields as a request's, the status the server answered the
 * handshake with (101 when it was accepted, the refusal's status otherwise, read from the first
 * bytes written) and how long the socket was open. The request id is sent back only in that log
 * line (a refused upgrade's status line is written by its refuser).
 */
export function beginUpgrade(deps: { log: Logger }, req: IncomingMessage, socket: Duplex, url: URL): void {
  const started = process.hrtime.bigint();
  const incoming = parseTraceparent(req.headers.traceparent);
  const requestId = incoming?.traceId ?? randomBytes(16).toString("hex");
  let status = 0;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  (socket as { write: (...args: unknown[]) => boolean }).write = (...args: unknown[]) => {
    if (status === 0) status = handshakeStatus(args[0]);
    return write(...args);
  };
  const origEnd = socket.end.bind(socket) as (...args: unknown[]) => Duplex;
  (socket as { end: (...args: unknown[]) => Duplex }).end = (...args: unknown[]) => {
    if (status === 0) status = handshakeStatus(args[0]);
    return origEnd(...args);
  };
  socket.once("close", () => {
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    deps.log.info({ access: true, requestId, method: req.method, path: loggedPath(url), upgrade: "websocket", userId: requestUserOf(req), status, durationMs: Math.round(durationMs * 10) / 10 }, "request");
  });
}
