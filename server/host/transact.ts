import type { Db } from "../../db/client";
import { appendEvents } from "../../db/repositories/events";
import type { TFrame, TNewEvent } from "../core/frames";
import type { TDeps } from "./deps";

export type TEmit = (responseId: string, events: readonly TNewEvent[]) => Promise<TFrame[]>;

/**
 * Runs `fn` in one transaction with an `emit` that appends trajectory events in that same
 * transaction; frames are published on the bus only after the commit, never before.
 */
export async function transact<T>(deps: Pick<TDeps, "db" | "bus">, fn: (tx: Db, emit: TEmit) => Promise<T>): Promise<T> {
  const published: Array<[string, TFrame[]]> = [];
  const result = await deps.db.transaction(async (tx) => {
    const emit: TEmit = async (responseId, events) => {
      const frames = await appendEvents(tx as unknown as Db, responseId, events);
      published.push([responseId, frames]);
      return frames;
    };
    return fn(tx as unknown as Db, emit);
  });
  for (const [responseId, frames] of published) deps.bus.publishFrames(responseId, frames);
  return result;
}

/**
 * Appends events to one response's trajectory on their own: `appendEvents` is one atomic
 * statement, so no transaction is needed; frames are published after it committed.
 */
export async function recordEvents(deps: Pick<TDeps, "db" | "bus">, responseId: string, events: readonly TNewEvent[]): Promise<void> {
  const frames = await appendEvents(deps.db, responseId, events);
  if (frames.length > 0) deps.bus.publishFrames(responseId, frames);
}
