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
 * cancelled, failed) after `afterSequence`. Subscribes first, so none is missed. A run executing
 * in this process announces its boundary here (seen live, or kept as the recent boundary), so
 * waiting for it reads nothing; for any other run the table is read once, and hints from other
 * replicas and the remote bus's poll re-read it.
 */
export async function waitForBoundary(deps: TDeps & { host: { isLocal: (responseId: string) => boolean } }, responseId: string, afterSequence: number, timeoutMs = deps.config.boundaryTimeoutMs): Promise<TEnvelope> {
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
      // A boundary this process published before we subscribed needs no read; otherwise the table is asked once.
      const recent = deps.bus.recentBoundary(responseId, afterSequence);
      if (recent) resolve(recent);
      else if (!deps.host.isLocal(responseId)) check();
    });
    return envelopeOfFrame(await found);
  } finally {
    unsubscribe();
    if (timer) clearTimeout(timer);
    if (poll) clearInterval(poll);
  }
}
