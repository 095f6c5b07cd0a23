import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { TErrorBody } from "../../core/wire-frames";
import { DRAIN_RETRY_AFTER_SECONDS, type DrainGate } from "../shared/drain-gate";
import { sendJson } from "../shared/respond";
import { refuseUpgradeWith } from "./errors";

/** A request a draining replica refuses (DrainGate.refuses): 503 `capacity` with `Retry-After`. */
export function refuseWhileDraining(res: ServerResponse, gate: DrainGate): void {
  sendJson(res, 503, { detail: gate.detail, code: "capacity" } satisfies TErrorBody, { "retry-after": String(DRAIN_RETRY_AFTER_SECONDS) });
}

/** A new WebSocket on a draining replica: 503 with `Retry-After`, before any upgrade. */
export function refuseUpgradeWhileDraining(socket: Duplex, gate: DrainGate): void {
  refuseUpgradeWith(socket, 503, { detail: gate.detail, code: "capacity" } satisfies TErrorBody, DRAIN_RETRY_AFTER_SECONDS);
}
