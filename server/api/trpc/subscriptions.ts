import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AnyTRPCProcedure } from "@trpc/server";
import { createCallerFactory, getErrorShape, getTRPCErrorFromUnknown, isTrackedEnvelope } from "@trpc/server/unstable-core-do-not-import";
import { DomainError } from "../../core/errors";
import { encodedOnce } from "../shared/encoded-once";
import { sendJson } from "../shared/respond";
import type { TOpenConnection } from "../shared/open-connections";
import type { TTransportDeps } from "../shared/deps";
import { createContext } from "./context";
import { toTrpcError } from "./errors";
import { appRouter } from "./root";

const SSE_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
  Connection: "keep-alive",
};

const createCaller = createCallerFactory()(appRouter);
const config = appRouter._def._config;
// Flat at run time ("responses.onFrames"), whatever the nested type says.
const procedures = appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>;

/**
 * A tracked value's data as sent. A tracked value is an event (a frame, an activity message), never
 * changed once yielded, and the same object reaches every stream that follows it: encoded once.
 */
const encode = (data: unknown): string => JSON.stringify(config.transformer.output.serialize(data));
const trackedObjectText = encodedOnce(encode);
const trackedText = (data: unknown): string => (data !== null && typeof data === "object" ? trackedObjectText(data) : encode(data));

const isAbortError = (error: unknown): boolean => error instanceof Error && (error.name === "AbortError" || (error as { code?: string }).code === "ABORT_ERR");

/**
 * Serves tRPC subscriptions (`GET /api/trpc/<subscription>?input=`) as SSE in tRPC's own wire
 * format (`connected`, `id`/`data` per tracked value, `serialized-error`, `return`), writing each
 * event straight to the socket. tRPC's adapter runs every event through a chain of web streams
 * whose promise hops starve the socket writes of 1,000 subscribers until all are encoded (see
 * docs/benchmarks.md, item 5); this path writes each one as it is produced. Anything this path
 * does not recognise, and any call that fails before it streams, is left to tRPC (returns false),
 * so errors keep tRPC's exact status and shape. Each stream takes one of the user's connection
 * slots (429 past the cap) and ends with an UNAUTHORIZED or FORBIDDEN error once the credential
 * it was opened with no longer holds.
 */
export function createSubscriptionResponder(deps: TTransportDeps, onError: (error: unknown, path: string) => void) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    if (req.method !== "GET") return false;
    const path = url.pathname.slice("/api/trpc/".length);
    const procedure = Object.hasOwn(procedures, path) ? procedures[path] : undefined;
    if (procedure?._def.type !== "subscription" || url.searchParams.has("batch")) return false;
    let input: unknown;
    try {
      const raw = url.searchParams.get("input");
      input = raw === null ? undefined : config.transformer.input.deserialize(JSON.parse(raw));
    } catch {
      return false;
    }
    const lastEventId = req.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? url.searchParams.get("Last-Event-Id");
    if (typeof lastEventId === "string" && lastEventId !== "") {
      if (input !== null && typeof input === "object" && !Array.isArray(input)) input = { ...input, lastEventId };
      else input ??= { lastEventId };
    }
    const abort = new AbortController();
    let iterable: AsyncIterable<unknown>;
    let ctx: Awaited<ReturnType<typeof createContext>>;
    let connection: TOpenConnection | null = null;
    try {
      ctx = await createContext(deps, req);
    } catch {
      return false;
    }
    try {
      connection = ctx.credential ? deps.connections.open(ctx.credential) : null;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const shape = getErrorShape({ config, ctx, error: toTrpcError(error), input, path, type: "subscription" });
      sendJson(res, 429, { error: config.transformer.output.serialize(shape) });
      return true;
    }
    try {
      let target: unknown = createCaller(ctx, { signal: abort.signal });
      for (const part of path.split(".")) target = (target as Record<string, unknown>)[part];
      const result = await (target as (i: unknown) => Promise<unknown>)(input);
      if (result === null || typeof result !== "object" || !(Symbol.asyncIterator in result)) return false;
      iterable = result as AsyncIterable<unknown>;
    } catch {
      // Unauthenticated, bad input, ...: tRPC answers it again, with its own status and shape.
      abort.abort();
      connection?.release();
      return false;
    }

    res.on("close", () => abort.abort());
    res.writeHead(200, SSE_HEADERS);
    // Waits only when the socket's buffer is full (an async function here would cost every event a promise).
    const write = (text: string): Promise<unknown> | undefined => (!res.write(text) && !res.destroyed ? Promise.race([once(res, "drain"), once(res, "close")]) : undefined);
    await write(`event: connected\ndata: ${JSON.stringify(config.sse?.client ?? {})}\n\n`);
    let lastId: string | null = typeof lastEventId === "string" && !/[\0\n\r]/.test(lastEventId) ? lastEventId : null;
    // Each wait for the next value also ends when the client goes away or the credential is
    // revoked, whether or not the procedure itself listens to its signal; the iterator is then
    // closed. One settle function per wait, replaced by the next: a Promise.race with two promises
    // that settle only at the end would add a reaction to each per value, keeping every value the
    // stream ever sent alive for as long as it lasts.
    const iterator = iterable[Symbol.asyncIterator]();
    const revoked = connection?.signal;
    let stopped: "gone" | "revoked" | null = null;
    let interrupt: ((why: "gone" | "revoked") => void) | null = null;
    const stop = (why: "gone" | "revoked") => {
      stopped ??= why;
      interrupt?.(stopped);
    };
    abort.signal.addEventListener("abort", () => stop("gone"), { once: true });
    if (revoked?.aborted) stop("revoked");
    else revoked?.addEventListener("abort", () => stop("revoked"), { once: true });
    const nextStep = (): Promise<IteratorResult<unknown> | "gone" | "revoked"> =>
      stopped
        ? Promise.resolve(stopped)
        : new Promise((resolve, reject) => {
            interrupt = resolve;
            iterator.next().then(resolve, reject);
          });
    try {
      for (;;) {
        const step = await nextStep();
        if (step === "gone" || step === "revoked") {
          void Promise.resolve(iterator.return?.()).catch(() => {});
          if (step === "revoked" && !abort.signal.aborted) {
            const error = toTrpcError(revoked?.reason as DomainError);
            await write(`event: serialized-error\ndata: ${JSON.stringify(config.transformer.output.serialize(getErrorShape({ config, ctx, error, input, path, type: "subscription" })))}\n\n`);
            abort.abort();
          }
          break;
        }
        if (step.done) break;
        const value = step.value;
        if (isTrackedEnvelope(value)) {
          const [id, data] = value;
          lastId = String(id);
          const full = write(`id: ${lastId}\ndata: ${trackedText(data)}\n\n`);
          if (full) await full;
        } else {
          const data = encode(value);
          // An untracked value after a tracked one keeps the client's last id (tRPC's restore-id).
          await write(lastId === null ? `data: ${data}\n\n` : `id: \ndata: ${data}\n\nevent: restore-id\ndata: \nid: ${lastId}\n\n`);
        }
      }
      if (!abort.signal.aborted) await write("event: return\ndata: \n\n");
    } catch (cause) {
      if (!abort.signal.aborted && !isAbortError(cause)) {
        const error = getTRPCErrorFromUnknown(cause);
        onError(error, path);
        const shape = getErrorShape({ config, ctx, error, input, path, type: "subscription" });
        await write(`event: serialized-error\ndata: ${JSON.stringify(config.transformer.output.serialize(shape))}\n\n`);
      }
    } finally {
      abort.abort();
      connection?.release();
      res.end();
    }
    return true;
  };
}
