import { activityBetween, latestEventId, type TActivityRow } from "../../../db/repositories/console-activity";
import type { TActor } from "../../core/actor";
import { READ_ALL_ROLES } from "../../core/vocabulary";
import type { TDeps } from "../../host/deps";

/** At most this many missed events are replayed after a reconnect; beyond it the client resyncs. */
const REPLAY_LIMIT = 500;
/** Re-read the table this often even without a notification (steering and lifecycle events do not notify). */
const POLL_MS = 2000;
/** Event ids below the cursor re-checked on every read: a transaction holding a lower id may commit later. */
const LATE_WINDOW = 64;

export type TActivityMessage =
  /** Refetch everything: first connect, or too much was missed. */
  | { kind: "sync"; head: number }
  /** Something changed that left no trajectory event (e.g. a gateway question): refetch. */
  | { kind: "changed" }
  | ({ kind: "event" } & TActivityRow);

/**
 * The console's activity feed, resumable from the last event id: trajectory events that change
 * what is waiting (approvals, questions, client tools, steering, devices, run starts and ends).
 * Each message carries the global event id (the transport tracks it), so a reconnecting client passes the last
 * id it saw and first receives exactly the events it missed (or one `sync` after a long absence).
 */
/** One message of the feed with the id a reconnecting client resumes from. */
export type TActivityItem = { id: string; message: TActivityMessage };
const item = (id: string, message: TActivityMessage): TActivityItem => ({ id, message });

export async function* activityFeed(deps: TDeps, actor: TActor, lastEventId: string | null | undefined, signal: AbortSignal | undefined) {
  const userId = READ_ALL_ROLES.includes(actor.role) ? null : actor.userId;
  let notified = 0;
  let wake: (() => void) | null = null;
  const unsubscribe = deps.bus.subscribeInbox(() => {
    notified++;
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener("abort", onAbort);
  try {
    const resumeFrom = lastEventId && /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : null;
    let cursor = await latestEventId(deps.db);
    const seen = new Set<number>();
    // Ids at or below `floor` were delivered (replayed) or deliberately skipped (covered by `sync`).
    let floor = cursor;
    if (resumeFrom === null || resumeFrom > cursor) {
      yield item(String(cursor), { kind: "sync", head: cursor } satisfies TActivityMessage);
    } else {
      const missed = await activityBetween(deps.db, { after: resumeFrom, upTo: cursor, userId, limit: REPLAY_LIMIT + 1 });
      if (missed.length > REPLAY_LIMIT) yield item(String(cursor), { kind: "sync", head: cursor } satisfies TActivityMessage);
      else {
        floor = resumeFrom;
        for (const row of missed) {
          seen.add(row.id);
          yield item(String(row.id), { kind: "event", ...row } satisfies TActivityMessage);
        }
        // Nothing missed (or the last missed one is not the head): still tell the client where it stands.
        if (missed.length === 0) yield item(String(cursor), { kind: "changed" } satisfies TActivityMessage);
      }
    }
    let handled = notified;
    let more = false;
    while (!signal?.aborted) {
      if (notified === handled && !more) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
      if (signal?.aborted) break;
      const hadNotification = notified !== handled;
      handled = notified;
      const head = await latestEventId(deps.db);
      const limit = REPLAY_LIMIT + LATE_WINDOW;
      const rows = await activityBetween(deps.db, { after: Math.max(floor, cursor - LATE_WINDOW), upTo: head, userId, limit });
      // A burst larger than one read: go on from the last row right away instead of skipping to the head.
      more = rows.length >= limit;
      const fresh = rows.filter((r) => !seen.has(r.id));
      for (const row of fresh) {
        seen.add(row.id);
        yield item(String(row.id), { kind: "event", ...row } satisfies TActivityMessage);
      }
      cursor = more ? Math.max(cursor, rows[rows.length - 1]?.id ?? cursor) : Math.max(cursor, head);
      for (const id of seen) if (id < cursor - LATE_WINDOW) seen.delete(id);
      if (fresh.length === 0 && hadNotification) yield item(String(cursor), { kind: "changed" } satisfies TActivityMessage);
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    unsubscribe();
  }
}
