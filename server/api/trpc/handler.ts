import type { IncomingMessage, ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { DomainError } from "../../core/errors";
import { MAX_BODY_BYTES, readBodyText } from "../shared/request-body";
import { RETRY_AFTER_FALLBACK_SECONDS } from "../shared/errors";
import type { TTransportDeps } from "../shared/deps";
import { createContext } from "./context";
import { appRouter } from "./root";
import { createSubscriptionResponder } from "./subscriptions";

/**
 * Bodies read here before tRPC sees them (so invalid UTF-8 is refused instead of decoded with
 * U+FFFD replacements), with the reason a body was refused; createContext turns it into the
 * call's error, in tRPC's own shape.
 */
const refusedBodies = new WeakMap<IncomingMessage, DomainError>();

async function readTrpcBody(req: IncomingMessage): Promise<void> {
  try {
    (req as IncomingMessage & { body?: string }).body = await readBodyText(req, MAX_BODY_BYTES);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    refusedBodies.set(req, error);
    (req as IncomingMessage & { body?: string }).body = "{}";
  }
}

/** The `/api/trpc` handler (queries, mutations, SSE subscriptions). */
export function createTrpcHandler(deps: TTransportDeps): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const handler = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    // Same limit as /v1 (413); without it the adapter would buffer a body of any size.
    maxBodySize: MAX_BODY_BYTES,
    createContext: ({ req }) => createContext(deps, req, refusedBodies.get(req)),
    // Every 429 says when to come back.
    responseMeta: ({ errors }) => (errors.some((e) => e.code === "TOO_MANY_REQUESTS") ? { headers: { "retry-after": String(RETRY_AFTER_FALLBACK_SECONDS) } } : {}),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") deps.log.error({ err: error, path }, "tRPC internal error");
    },
  });
  const subscriptions = createSubscriptionResponder(deps, (error, path) => {
    if ((error as { code?: string }).code === "INTERNAL_SERVER_ERROR") deps.log.error({ err: error, path }, "tRPC internal error");
  });
  return async (req, res, url) => {
    if (req.method === "GET" && (await subscriptions(req, res, url))) return;
    if (req.method === "POST") await readTrpcBody(req);
    handler(req, res);
  };
}
