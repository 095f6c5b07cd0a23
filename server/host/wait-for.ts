import type { TFrame } from "../core/frames";
import type { EventBus, TFrameHint } from "../ports/bus";

/** What wakes a waiter: subscribes `wake` to one bus topic, returns the unsubscribe. */
export type TTopic = (wake: () => void) => () => void;

export type TWaitForOptions = {
  /** Gives up at this time (epoch ms): the result is null. */
  deadline: number;
  /** Gives up when aborted: the result is null. */
  signal?: AbortSignal;
  /** Also checks this often, so a lost notification cannot stall the waiter. */
  pollMs?: number;
};

/**
 * The one wait of the server: subscribes to `topic` first (so a change announced meanwhile is not
 * missed), runs `check`, and runs it again after every wake, every `pollMs` and right before
 * giving up, until it returns a value (not null), the deadline passes or the signal aborts
 * (null). `check` decides what a wake means; it may cost nothing when nothing changed.
 */
export async function waitFor<T>(topic: TTopic, check: () => Promise<T | null>, options: TWaitForOptions): Promise<T | null> {
  let woken = false;
  let wake: () => void = () => {
    woken = true;
  };
  const unsubscribe = topic(() => wake());
  const onAbort = () => wake();
  options.signal?.addEventListener("abort", onAbort);
  try {
    for (;;) {
      woken = false;
      const found = await check();
      if (found !== null) return found;
      if (options.signal?.aborted) return null;
      const left = options.deadline - Date.now();
      if (left <= 0) return null;
      if (woken) continue;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, Math.min(left, options.pollMs ?? left));
      });
      clearTimeout(timer);
      wake = () => {
        woken = true;
      };
    }
  } finally {
    unsubscribe();
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** A question changed state (answered, cancelled, expired). */
export const questionTopic =
  (bus: Pick<EventBus, "subscribeQuestion">, questionId: string): TTopic =>
  (wake) =>
    bus.subscribeQuestion((change) => {
      if (change.questionId === questionId) wake();
    });

/** A response's frames (live ones, or hints from other replicas): `onFrame` sees each and says whether it wakes the waiter. */
export const framesTopic =
  (bus: Pick<EventBus, "subscribeFrames">, responseId: string, onFrame: (frame: TFrame | TFrameHint) => boolean): TTopic =>
  (wake) =>
    bus.subscribeFrames(responseId, (frame) => {
      if (onFrame(frame)) wake();
    });
