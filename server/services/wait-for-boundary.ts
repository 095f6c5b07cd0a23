import { boundaryAfter } from "../../db/repositories/events";
import type { TEnvelope } from "../core/envelope";
import { DomainError } from "../core/errors";
import type { TFrame } from "../core/frames";
import type { TDeps } from "../host/deps";

/** Strips the frame fields off a stored `response.completed` frame, giving the envelope. */
export function envelopeOfFrame(frame: TFrame): TEnvelope {
  const { type: _t, sequence: _s, responseId, ...rest } = frame;
  return { ...(rest as Omit<TEnvelope, "id">), id: responseId } as TEnvelope;
}

/**
 * Waits for the first boundary (`response.completed` frame: completed, requires_action, denied,
 * cancelled, failed) after `afterSequence`. Subscribes before reading, so none is missed.
 */
export async function waitForBoundary(deps: TDeps, responseId: string, afterSequence: number, timeoutMs = deps.config.boundaryTimeoutMs): Promise<TEnvelope> {
  let unsubscribe = () => {};
  let timer: NodeJS.Timeout | undefined;
  try {
    const live = new Promise<TFrame>((resolve, reject) => {
      unsubscribe = deps.bus.subscribeFrames(responseId, (frame) => {
        if (frame.type === "response.completed" && frame.sequence > afterSequence) resolve(frame);
      });
      timer = setTimeout(
        () => reject(new DomainError("timeout", `The response did not reach its next boundary within ${timeoutMs} ms; poll GET /v1/responses/${responseId}.`)),
        timeoutMs,
      );
    });
    live.catch(() => {});
    const stored = await boundaryAfter(deps.db, responseId, afterSequence);
    return envelopeOfFrame(stored ?? (await live));
  } finally {
    unsubscribe();
    if (timer) clearTimeout(timer);
  }
}
