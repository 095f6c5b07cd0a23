import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { ZAdminTrailFilter } from "../../core/admin-trail";
import { DomainError } from "../../core/errors";
import { readScope } from "../../core/read-scope";
import { EVENT_CATEGORY_NAMES, type TEventCategory } from "../../core/vocabulary";
import type { TTrajectoryScope } from "../../services/console/audit";
import { adminTrailBatches, type TAdminTrailFilter } from "../../services/console/admin-trail";
import { trajectoryExport } from "../../services/read/console";
import { trajectoryLine } from "../../services/read/trajectory-line";
import { sendError } from "./errors";
import { identify } from "../shared/identify";
import type { TTransportDeps } from "../shared/deps";

/** Events read per query; one batch is all the export holds in memory. */
const BATCH = 250;
const ID = /^[A-Za-z0-9_-]{1,200}$/;

/** The export's scope and filters from the query string (the same filters as the console's audit view). */
function parseQuery(url: URL): { scope: TTrajectoryScope; categories?: TEventCategory[]; actor?: string; q?: string } {
  const responseId = url.searchParams.get("responseId");
  const sessionId = url.searchParams.get("sessionId");
  if ((responseId ? 1 : 0) + (sessionId ? 1 : 0) !== 1) throw new DomainError("invalid_request", "Give exactly one of responseId and sessionId.");
  const id = (responseId ?? sessionId) as string;
  if (!ID.test(id)) throw new DomainError("invalid_request", "The id is not valid.");
  const categories = (url.searchParams.get("categories") ?? "").split(",").filter(Boolean);
  const unknown = categories.filter((c) => !(EVENT_CATEGORY_NAMES as readonly string[]).includes(c));
  if (unknown.length > 0) throw new DomainError("invalid_request", `Unknown event categories: ${unknown.join(", ")}.`);
  const actor = url.searchParams.get("actor") || undefined;
  if (actor && !ID.test(actor)) throw new DomainError("invalid_request", "The actor is not valid.");
  const q = url.searchParams.get("q")?.trim() || undefined;
  if (q && q.length > 200) throw new DomainError("invalid_request", "The search text is longer than 200 characters.");
  return {
    scope: responseId ? { responseId: id } : { sessionId: id },
    categories: categories.length > 0 ? (categories as TEventCategory[]) : undefined,
    actor,
    q,
  };
}

/**
 * Writes batches as JSONL with backpressure (a slow client holds the export, never the server's
 * memory). A failure after the headers destroys the response: a truncated download must not look complete.
 */
async function streamJsonl<T>(deps: TTransportDeps, res: ServerResponse, batches: AsyncIterable<T[]>, line: (row: T) => string, signal: AbortSignal, what: Record<string, unknown>): Promise<void> {
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        res.off("drain", done);
        res.off("close", done);
        resolve();
      };
      res.on("drain", done);
      res.on("close", done);
    });
  try {
    for await (const rows of batches) {
      for (const row of rows) {
        if (signal.aborted) return;
        if (!res.write(`${line(row)}\n`)) await drained();
      }
    }
    res.end();
  } catch (error) {
    deps.log.error({ err: error, ...what }, "export failed");
    res.destroy();
  }
}

const JSONL_HEADERS = { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" };

/** The admin trail export's filters from the query string (the same as `admin.trail`'s). */
function parseTrailQuery(url: URL): TAdminTrailFilter {
  const parsed = z.strictObject(ZAdminTrailFilter).safeParse(Object.fromEntries([...url.searchParams].filter(([, v]) => v !== "")));
  if (!parsed.success) throw new DomainError("invalid_request", `The admin trail filters are not valid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * `GET /api/export/admin-trail[?actor=&action=&from=&to=]`: the admin trail as JSONL, newest
 * first, streamed in keyset batches. Admins and auditors only (403 for the others).
 */
async function handleTrailExport(deps: TTransportDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const identity = await identify(deps, deps.auth, req, url);
  if (!identity) return sendError(res, new DomainError("unauthenticated", "Authentication required"));
  const filter = parseTrailQuery(url);
  const abort = new AbortController();
  const batches = adminTrailBatches(deps, identity.actor, filter, BATCH, abort.signal);
  // The role check runs at the first batch: refuse before any header is sent.
  const first = await batches.next();
  res.on("close", () => abort.abort());
  res.writeHead(200, { ...JSONL_HEADERS, "content-disposition": 'attachment; filename="admin-trail.jsonl"' });
  deps.log.info({ filter, by: identity.actor.userId }, "admin trail exported");
  async function* all() {
    if (!first.done) yield first.value;
    yield* batches;
  }
  await streamJsonl(deps, res, all(), (row) => JSON.stringify(row), abort.signal, { export: "admin-trail" });
}

/**
 * `GET /api/export/trajectory?responseId=|sessionId=[&categories=&actor=&q=]`: a trajectory as
 * JSONL, one event per line, streamed in keyset batches with backpressure (never built in
 * memory). Console cookie or API key; whoever may read the trajectory may export it (auditors
 * everything, members their own). `GET /api/export/admin-trail`: the admin trail (above).
 */
export async function handleExport(deps: TTransportDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (url.pathname !== "/api/export/trajectory" && url.pathname !== "/api/export/admin-trail") return sendError(res, new DomainError("not_found", `There is no page ${url.pathname}.`));
  if (req.method !== "GET") return sendError(res, new DomainError("method_not_allowed", `Use GET to export ${url.pathname.endsWith("trajectory") ? "a trajectory" : "the admin trail"}.`));
  if (url.pathname === "/api/export/admin-trail") return handleTrailExport(deps, req, res, url);
  const identity = await identify(deps, deps.auth, req, url);
  if (!identity) return sendError(res, new DomainError("unauthenticated", "Authentication required"));
  const query = parseQuery(url);
  const abort = new AbortController();
  const batches = await trajectoryExport(deps, readScope(identity.actor), query.scope, { categories: query.categories, actor: query.actor, q: query.q }, BATCH, abort.signal);
  res.on("close", () => abort.abort());
  const id = "responseId" in query.scope ? query.scope.responseId : query.scope.sessionId;
  res.writeHead(200, { ...JSONL_HEADERS, "content-disposition": `attachment; filename="trajectory-${id}.jsonl"` });
  deps.log.info({ scope: query.scope, by: identity.actor.userId }, "trajectory exported");
  await streamJsonl(deps, res, batches, trajectoryLine, abort.signal, { scope: query.scope });
}
