import type { z } from "zod";
import { checkReadiness } from "../../../services/readiness";
import { sendJson } from "../../shared/respond";
import { serveMetrics } from "../metrics";
import { defineRoute, type TPublicCtx } from "../route";
import { ZHealth, ZNotReady, ZReady } from "../v1-schemas";

/** `GET /v1/healthz`: the cheap liveness check; it touches nothing. */
async function getHealth({ deps, res }: TPublicCtx): Promise<void> {
  sendJson(res, 200, { ok: true, database: deps.dbKind } satisfies z.input<typeof ZHealth>);
}

export const healthRoute = defineRoute({
  method: "GET",
  path: "/v1/healthz",
  auth: false,
  docs: { operationId: "getHealth", summary: "Is the server up, and on which database", responses: { 200: { description: "Up", json: ZHealth } } },
  handle: getHealth,
});

/** `GET /v1/readyz`: the database answers within the readiness timeout and its migrations are applied; a draining replica is not ready. */
async function getReadiness({ deps, res }: TPublicCtx): Promise<void> {
  // A draining replica (SIGTERM) is alive but takes no new work: load balancers stop sending it any.
  if (deps.drain.draining) {
    return sendJson(res, 503, { detail: deps.drain.detail, code: "capacity", reason: "draining" } satisfies z.input<typeof ZNotReady>, { "cache-control": "no-store", "retry-after": "5" });
  }
  const readiness = await checkReadiness(deps, deps.ops.readyTimeoutMs);
  if (readiness.ready) return sendJson(res, 200, { status: "ready", database: readiness.database, migrations: readiness.migrations } satisfies z.input<typeof ZReady>);
  sendJson(res, 503, { detail: readiness.detail, code: "capacity", reason: readiness.reason } satisfies z.input<typeof ZNotReady>, { "cache-control": "no-store" });
}

export const readinessRoute = defineRoute({
  method: "GET",
  path: "/v1/readyz",
  // Public like /v1/healthz (load balancers and orchestrators probe it without a key); it names no secret.
  auth: false,
  docs: {
    operationId: "getReadiness",
    summary: "Is the server ready for traffic: the database answers and its migrations are applied",
    description: "One query, bounded by `COUNTERSIGN_READY_TIMEOUT_MS` (default 2000): a hung database answers 503 `database_timeout` after it, never a hanging probe. A replica draining after SIGTERM answers 503 `draining`. `/v1/healthz` stays the cheap liveness check that touches nothing.",
    responses: { 200: { description: "Ready", json: ZReady }, 503: { description: "Not ready; `reason` says why", json: ZNotReady } },
  },
  handle: getReadiness,
});

/** `GET /metrics`: for the metrics token or an admin's credential (checked by serveMetrics). */
async function getMetrics({ deps, req, res, url }: TPublicCtx): Promise<void> {
  await serveMetrics(deps, req, res, url, deps.ops.metricsToken);
}

export const metricsRoute = defineRoute({
  method: "GET",
  path: "/metrics",
  // Checked by its handler: the metrics token or an admin's credential.
  auth: "self",
  docs: {
    operationId: "getMetrics",
    summary: "Prometheus metrics (text format)",
    description:
      "For `Authorization: Bearer <COUNTERSIGN_METRICS_TOKEN>` or an admin's API key; 401 without either, 403 for any other role. Also served on `COUNTERSIGN_METRICS_PORT` when set (same rule). docs/operations.md lists the metrics.",
    responses: { 200: { description: "The metrics", text: "Prometheus text exposition format 0.0.4" } },
    errors: [403],
  },
  handle: getMetrics,
});
