import { framesAfter } from "../../db/repositories/events";
import type { TFrame } from "../core/frames";
import type { TDeps } from "../host/deps";

/**
 * Yields a response's frames after `afterSequence`, stored ones first and then live ones, in
 * order and without gaps: it subscribes before reading and fills any gap from the table.
 * The consumer stops by breaking out or aborting `signal`.
 */
export async function* followFrames(deps: TDeps, responseId: string, afterSequence: number, signal: AbortSignal): AsyncGenerator<TFrame> {
  const queue: TFrame[] = [];
  let wake: (() => void) | null = null;
  const unsubscribe = deps.bus.subscribeFrames(responseId, (frame) => {
    queue.push(frame);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  let last = afterSequence;
  try {
    for (const frame of await framesAfter(deps.db, responseId, last)) {
      yield frame;
      last = frame.sequence;
    }
    while (!signal.aborted) {
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
        for (const frame of await framesAfter(deps.db, responseId, last)) {
          yield frame;
          last = frame.sequence;
        }
        continue;
      }
      for (const frame of batch) {
        if (frame.sequence !== last + 1) break;
        yield frame;
        last = frame.sequence;
      }
    }
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
  }
}

/** Is this the frame after which nothing more will come for the response? */
export const isTerminalFrame = (frame: TFrame): boolean =>
  frame.type === "response.completed" && frame.status !== "requires_action";
