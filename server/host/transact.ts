import type { Db } from "../../db/client";
import { appendEvents } from "../../db/repositories/events";
import { notifyChannel } from "../../db/repositories/peers";
import type { TFrame, TNewEvent } from "../core/frames";
import { PEER_CHANNEL } from "./bus";
import type { TAnnouncement } from "../ports/bus";
import type { TDeps } from "./deps";

export type TEmit = (responseId: string, events: readonly TNewEvent[]) => Promise<TFrame[]>;

/** Queues a change to announce once the transaction commits (and tells peers inside it). */
export type TAnnounce = (announcement: TAnnouncement) => void;

/**
 * Runs `fn` in one transaction with an `emit` that appends trajectory events in that same
 * transaction and an `announce` for other changes. Everything is published only after the
 * commit, never before; peers (replicas) are told by one NOTIFY sent inside the transaction,
 * which PostgreSQL delivers on commit only, so announcing adds no commit of its own. The NOTIFY
 * leaves with the COMMIT (one wait for the database, not two); its own outcome is checked once
 * the commit returned, because PostgreSQL answers the COMMIT of a transaction a failed NOTIFY
 * aborted with a rollback, not an error. The lifecycle facts the announcements name, and the
 * updates of Slack messages about approvals settled, go into the notification outbox in the same
 * transaction (through `deps.lifecycle`, the notifier's port, when notifications are on).
 */
export async function transact<T>(deps: Pick<TDeps, "db" | "bus"> & Partial<Pick<TDeps, "lifecycle" | "now">>, fn: (tx: Db, emit: TEmit, announce: TAnnounce) => Promise<T>): Promise<T> {
  const batch: TAnnouncement[] = [];
  const announce: TAnnounce = (a) => {
    batch.push(a);
  };
  let notified: Promise<void> | null = null;
  const result = await deps.db.transaction(async (raw) => {
    const tx = raw as unknown as Db;
    const emit: TEmit = async (responseId, events) => {
      const frames = await appendEvents(tx, responseId, events);
      if (frames.length > 0) batch.push({ k: "frames", responseId, frames });
      return frames;
    };
    const value = await fn(tx, emit, announce);
    // Lifecycle webhooks (approval/question resolved, response completed/failed) and the updates
    // of Slack messages about settled approvals commit with their change.
    if (deps.lifecycle) await deps.lifecycle(tx, batch, deps.now?.() ?? new Date());
    notified = notifyPeers(tx, deps.bus, batch);
    // Awaited below, after the commit; never an unhandled rejection meanwhile.
    notified.catch(() => {});
    return value;
  });
  // A NOTIFY that failed rolled the transaction back: nothing was committed, so nothing is published.
  if (notified) await notified;
  deps.bus.deliverLocally(batch);
  return result;
}

async function notifyPeers(tx: Db, bus: TDeps["bus"], batch: readonly TAnnouncement[]): Promise<void> {
  if (!bus.peerPayloads || batch.length === 0) return;
  const payloads = bus.peerPayloads(batch);
  if (payloads.length === 0) return;
  await notifyChannel(tx, PEER_CHANNEL, payloads);
}

/**
 * Appends events to one response's trajectory on their own: `appendEvents` is one atomic
 * statement, so no transaction is needed; frames are published after it committed.
 */
export async function recordEvents(deps: Pick<TDeps, "db" | "bus">, responseId: string, events: readonly TNewEvent[]): Promise<void> {
  const frames = await appendEvents(deps.db, responseId, events);
  if (frames.length > 0) deps.bus.publishFrames(responseId, frames);
}
