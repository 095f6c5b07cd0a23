import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { DomainError } from "../../core/errors";
import type { TTransportDeps } from "../shared/deps";
import { identify } from "../shared/identify";

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

/** Constant-time comparison of a presented bearer with the metrics token (both hashed first, so lengths do not leak). */
export function matchesMetricsToken(presented: string, token: string): boolean {
  return timingSafeEqual(digest(presented), digest(token));
}

/**
 * `GET /metrics`: the Prometheus text format, for the `COUNTERSIGN_METRICS_TOKEN` bearer or an
 * admin's credential (API key or console session); 401 without either, 403 for other roles.
 */
export async function serveMetrics(deps: TTransportDeps, req: IncomingMessage, res: ServerResponse, url: URL, metricsToken: string | null): Promise<void> {
  const bearer = req.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  const byToken = metricsToken !== null && bearer !== undefined && matchesMetricsToken(bearer, metricsToken);
  if (!byToken) {
    const identity = await identify(deps, deps.auth, req, url);
    if (!identity) throw new DomainError("unauthenticated", "Metrics need the metrics token or an admin's API key as a Bearer token.");
    if (identity.actor.role !== "admin") throw new DomainError("forbidden", "Only admins (or the metrics token) may read the metrics.");
  }
  const { contentType, body } = await deps.observe.scrape();
  res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
  res.end(body);
}

