import { boundaryAfter } from "../../db/repositories/events";
import type { TEnvelope } from "../core/envelope";
import { DomainError } from "../core/errors";
import type { TFrame } from "../core/frames";
import { isHint } from "../host/bus";
import type { TDeps } from "../host/deps";

/** Strips the frame fields off a stored `response.completed` frame, giving the envelope. */
export function envelopeOfFrame(frame: TFrame): TEnvelope {
  const { type: _t, sequence: _s, responseId, ...rest } = frame;
  return { ...(rest as Omit<TEnvelope, "id">), id: responseId } as TEnvelope;
}

/**
 * Waits for the first boundary (`response.completed` frame: completed, requires_action, denied,
 * cancelled, failed) after `afterSequence`. Subscribes before reading, so none is missed; hints
 * from other replicas and the remote bus's poll re-read the table.
 */
export async function waitForBoundary(deps: TDeps, responseId: string, afterSequence: number, timeoutMs = deps.config.boundaryTimeoutMs): Promise<TEnvelope> {
  let unsubscribe = () => {};
  let timer: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  try {
    const found = new Promise<TFrame>((resolve, reject) => {
      const check = () => {
        boundaryAfter(deps.db, responseId, afterSequence)
          .then((frame) => frame && resolve(frame))
          .catch(() => {});
      };
      unsubscribe = deps.bus.subscribeFrames(responseId, (frame) => {
        if (isHint(frame)) check();
        else if (frame.type === "response.completed" && frame.sequence > afterSequence) resolve(frame);
      });
      if (deps.bus.pollMs) poll = setInterval(check, deps.bus.pollMs);
      timer = setTimeout(
        () => reject(new DomainError("timeout", `The response did not reach its next boundary within ${timeoutMs} ms; poll GET /v1/responses/${responseId}.`)),
        timeoutMs,
      );
      check();
    });
    return envelopeOfFrame(await found);
  } finally {
    unsubscribe();
    if (timer) clearTimeout(timer);
    if (poll) clearInterval(poll);
  }
}
