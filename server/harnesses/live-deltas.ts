import { randomBytes } from "node:crypto";
import type { TTurnStream } from "../../plugin-sdk/loops";

/** Commits one frame right away (the step recorder's `liveFrame`). */
type TLiveWrite = (type: string, data: Record<string, unknown>) => Promise<void>;

/** Deltas wait at most this long before they are written... */
const FLUSH_MS = 50;
/** ...or until this many characters are buffered. */
const FLUSH_CHARS = 64;

/**
 * Streams the deltas of one model turn as `response.text.delta` / `response.thinking.delta`
 * frames while the model answers. Deltas are batched: a frame is written once 64 characters are
 * buffered or 50 ms after the first buffered delta, and at most one write is in flight (later
 * deltas merge into the next frame meanwhile), so the write rate stays bounded (about 20 frames
 * a second, or one per 64 characters) whatever the model's pace. Each call is one try of the turn, with a fresh
 * `occurrenceId` beside the stable `itemId`, so the deltas of a retried turn (after a crash) are
 * told apart from the earlier, abandoned ones. A failed write (e.g. the response was settled
 * meanwhile) stops the stream and is thrown by `close()`.
 */
export function liveDeltas(write: TLiveWrite, turnIndex: number) {
  const occurrence = randomBytes(6).toString("hex");
  const ids = {
    text: { type: "response.text.delta", itemId: `msg_${turnIndex}`, occurrenceId: `occ_${turnIndex}_${occurrence}` },
    reasoning: { type: "response.thinking.delta", itemId: `rsn_${turnIndex}`, occurrenceId: `occ_rsn_${turnIndex}_${occurrence}` },
  } as const;
  const queue: Array<{ kind: "text" | "reasoning"; text: string }> = [];
  const streamed = { text: false, reasoning: false };
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let failure: { error: unknown } | null = null;

  const buffered = () => queue.reduce((n, s) => n + s.text.length, 0);
  // A kind switch (reasoning → text) closes the earlier segment: it can go now.
  const ready = () => queue.length > 1 || buffered() >= FLUSH_CHARS;

  /** Writes the first segment (when `force`) and then whatever is ready, one write at a time. */
  const pump = async (force: boolean) => {
    let first = force;
    while (queue.length > 0 && !failure && (first || ready())) {
      first = false;
      const segment = queue.shift() as (typeof queue)[number];
      const { type, itemId, occurrenceId } = ids[segment.kind];
      try {
        await write(type, { delta: segment.text, itemId, occurrenceId });
      } catch (error) {
        failure = { error };
      }
    }
  };
  const start = (force: boolean) => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (inFlight || queue.length === 0 || failure) return;
    inFlight = pump(force).finally(() => {
      inFlight = null;
      schedule();
    });
  };
  /** What is buffered and not ready goes out within FLUSH_MS. */
  const schedule = () => {
    if (!inFlight && !timer && queue.length > 0 && !failure) timer = setTimeout(() => start(true), FLUSH_MS);
  };
  const push = (kind: "text" | "reasoning", delta: string) => {
    if (failure || delta === "") return;
    streamed[kind] = true;
    const last = queue.at(-1);
    // A segment not yet picked up by the writer keeps growing (it merges while a write is in flight).
    if (last && last.kind === kind) last.text += delta;
    else queue.push({ kind, text: delta });
    if (inFlight) return;
    if (ready()) start(false);
    else schedule();
  };

  return {
    stream: { text: (d: string) => push("text", d), reasoning: (d: string) => push("reasoning", d) } satisfies TTurnStream,
    /** Which kinds were streamed live (their final frame is then not repeated). */
    streamed,
    ids,
    /** Writes what is still buffered; throws the first failed write. */
    close: async (): Promise<void> => {
      for (;;) {
        start(true);
        if (!inFlight) break;
        await inFlight;
      }
      if (timer) clearTimeout(timer);
      timer = null;
      if (failure) throw failure.error;
    },
  };
}
