import { framesAfter } from "../../db/repositories/events";
import type { TFrame } from "../core/frames";
import { isHint } from "../host/bus";
import type { TDeps } from "../host/deps";

/**
 * Yields a response's frames after `afterSequence`, stored ones first and then live ones, in
 * order and without gaps: it subscribes before reading and fills any gap from the table. Hints
 * from other replicas (and, with a remote bus, a periodic poll) also read the table.
 * The consumer stops by breaking out or aborting `signal`.
 */
export async function* followFrames(deps: TDeps, responseId: string, afterSequence: number, signal: AbortSignal): AsyncGenerator<TFrame> {
  const queue: TFrame[] = [];
  let readTable = false;
  let wake: (() => void) | null = null;
  const unsubscribe = deps.bus.subscribeFrames(responseId, (frame) => {
    if (isHint(frame)) readTable = true;
    else queue.push(frame);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  const poll = deps.bus.pollMs ? setInterval(() => {
    readTable = true;
    wake?.();
  }, deps.bus.pollMs) : undefined;
  let last = afterSequence;
  try {
    readTable = true;
    while (!signal.aborted) {
      if (readTable) {
        readTable = false;
        for (const frame of await framesAfter(deps.db, responseId, last)) {
          yield frame;
          last = frame.sequence;
        }
        continue;
      }
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        continue;
      }
      const batch = queue.splice(0).filter((f) => f.sequence > last).sort((a, b) => a.sequence - b.sequence);
      if (batch.length === 0) continue;
      if ((batch[0]?.sequence ?? 0) !== last + 1) {
        readTable = true;
        continue;
      }
      for (const frame of batch) {
        if (frame.sequence !== last + 1) {
          readTable = true;
          break;
        }
        yield frame;
        last = frame.sequence;
      }
    }
  } finally {
    unsubscribe();
    if (poll) clearInterval(poll);
    signal.removeEventListener("abort", onAbort);
  }
}

/** Is this the frame after which nothing more will come for the response? */
export const isTerminalFrame = (frame: TFrame): boolean =>
  frame.type === "response.completed" && frame.status !== "requires_action";
