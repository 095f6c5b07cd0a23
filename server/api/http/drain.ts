import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { TErrorBody } from "../../core/wire-frames";
import { refuseUpgradeWith, sendJson } from "./errors";

/** How long a client is asked to wait before retrying a request a draining replica refused. */
export const DRAIN_RETRY_AFTER_SECONDS = 5;

const DRAINING_DETAIL = "This server is shutting down and takes no new runs or decisions; retry in a few seconds (another replica answers, or this one after its restart). Nothing was applied.";

/**
 * Graceful shutdown's front door. Once a replica drains (SIGTERM), every request that would
 * start or settle something (a new run, a decision, an answer, a steer, any tRPC mutation, a new
 * WebSocket) is refused with 503 and `Retry-After`; reads, streams already open and the runs
 * already executing here go on until the drain window ends.
 */
export class DrainGate {
  private drainingSince: number | null = null;

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  begin(): void {
    this.drainingSince ??= Date.now();
  }

  /** Whether this request would admit work: anything but a read on the API surfaces. */
  refuses(method: string | undefined, path: string): boolean {
    if (!this.draining) return false;
    if (method === "GET" || method === "HEAD" || method === "OPTIONS") return false;
    return path === "/v1" || path.startsWith("/v1/") || path.startsWith("/api/");
  }

  /** Whether a WebSocket frame of this type would admit work (following a response or closing does not). */
  refusesFrame(type: string): boolean {
    return this.draining && type !== "response.subscribe" && type !== "session.close";
  }

  readonly detail = DRAINING_DETAIL;

  refuse(res: ServerResponse): void {
    sendJson(res, 503, { detail: DRAINING_DETAIL, code: "capacity" } satisfies TErrorBody, { "retry-after": String(DRAIN_RETRY_AFTER_SECONDS) });
  }
}

/** A new WebSocket on a draining replica: 503 with `Retry-After`, before any upgrade. */
export function refuseUpgradeWhileDraining(socket: Duplex): void {
  refuseUpgradeWith(socket, 503, { detail: DRAINING_DETAIL, code: "capacity" } satisfies TErrorBody, DRAIN_RETRY_AFTER_SECONDS);
}
