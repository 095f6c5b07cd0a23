import type { IncomingMessage, ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { MAX_BODY_BYTES } from "../http/body";
import type { TV1Deps } from "../http/v1";
import { createContext } from "./context";
import { appRouter } from "./root";
import { createSubscriptionResponder } from "./subscriptions";

/** The `/api/trpc` handler (queries, mutations, SSE subscriptions). */
export function createTrpcHandler(deps: TV1Deps): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const handler = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    // Same limit as /v1 (413); without it the adapter would buffer a body of any size.
    maxBodySize: MAX_BODY_BYTES,
    createContext: ({ req }) => createContext(deps, req),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") deps.log.error({ err: error, path }, "tRPC internal error");
    },
  });
  const subscriptions = createSubscriptionResponder(deps, (error, path) => {
    if ((error as { code?: string }).code === "INTERNAL_SERVER_ERROR") deps.log.error({ err: error, path }, "tRPC internal error");
  });
  return async (req, res, url) => {
    if (req.method === "GET" && (await subscriptions(req, res, url))) return;
    handler(req, res);
  };
}
