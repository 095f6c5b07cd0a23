import { boundaryAfter } from "../../db/repositories/events";
import type { TEnvelope } from "../core/envelope";
import { DomainError } from "../core/errors";
import type { TFrame } from "../core/frames";
import { isHint } from "../host/bus";
import type { TDeps } from "../host/deps";
import { framesTopic, waitFor } from "../host/wait-for";

/** Strips the frame fields off a stored `response.completed` frame, giving the envelope. */
export function envelopeOfFrame(frame: TFrame): TEnvelope {
  const { type: _t, sequence: _s, responseId, ...rest } = frame;
  return { ...(rest as Omit<TEnvelope, "id">), id: responseId } as TEnvelope;
}

/**
 * Waits for the first boundary (`response.completed` frame: completed, requires_action, denied,
 * cancelled, failed) after `afterSequence`. Subscribes first, so none is missed. A run executing
 * in this process announces its boundary here (seen live, or kept as the recent boundary), so
 * waiting for it reads nothing; for any other run the table is read once, and hints from other
 * replicas and the remote bus's poll re-read it.
 */
export async function waitForBoundary(deps: TDeps & { host: { isLocal: (responseId: string) => boolean } }, responseId: string, afterSequence: number, timeoutMs = deps.config.boundaryTimeoutMs): Promise<TEnvelope> {
  let seen: TFrame | null = deps.bus.recentBoundary(responseId, afterSequence);
  // A run executing here announces its boundary live; any other run's is read from the table.
  let read = seen === null && !deps.host.isLocal(responseId);
  const topic = framesTopic(deps.bus, responseId, (frame) => {
    if (isHint(frame)) read = true;
    else if (frame.type === "response.completed" && frame.sequence > afterSequence) seen ??= frame;
    else return false;
    return true;
  });
  let lastRead = Date.now();
  const found = await waitFor(
    topic,
    async () => {
      if (seen) return seen;
      // With a remote bus the table is also re-read every pollMs: a lost notification cannot stall us.
      if (!read && !(deps.bus.pollMs && Date.now() - lastRead >= deps.bus.pollMs)) return null;
      read = false;
      lastRead = Date.now();
      return boundaryAfter(deps.db, responseId, afterSequence);
    },
    { deadline: Date.now() + timeoutMs, ...(deps.bus.pollMs ? { pollMs: deps.bus.pollMs } : {}) },
  );
  if (!found) throw new DomainError("timeout", `The response did not reach its next boundary within ${timeoutMs} ms; poll GET /v1/responses/${responseId}.`);
  return envelopeOfFrame(found);
}
