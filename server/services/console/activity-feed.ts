import { activityBetween, latestEventId, type TActivityRow } from "../../../db/repositories/console-activity";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";

/** At most this many missed events are replayed after a reconnect; beyond it the client resyncs. */
const REPLAY_LIMIT = 500;
/** Re-read the table this often even without a notification (steering and lifecycle events do not notify). */
const POLL_MS = 2000;
/** Event ids below the cursor re-checked on every read: a transaction holding a lower id may commit later. */
const LATE_WINDOW = 64;
/** Rows one read of the tail takes; a larger burst is read on at once. */
const READ_LIMIT = REPLAY_LIMIT + LATE_WINDOW;

export type TActivityMessage =
  /** Refetch everything: first connect, or too much was missed. */
  | { kind: "sync"; head: number }
  /** Something changed that left no trajectory event (e.g. a gateway question): refetch. */
  | { kind: "changed" }
  | ({ kind: "event" } & TActivityRow);

/** One message of the feed with the id a reconnecting client resumes from. */
export type TActivityItem = { id: string; message: TActivityMessage };
const item = (id: string, message: TActivityMessage): TActivityItem => ({ id, message });

/**
 * What the tail hands every follower after one read: the new rows (every user's) as feed items,
 * and whether the bus announced a change. Every follower gets the same item objects, so each is
 * encoded once for all the streams that send it.
 */
type TEventItem = { id: string; message: { kind: "event" } & TActivityRow };
type TTailBatch = { items: TEventItem[]; notified: boolean; changed: TActivityItem };

/**
 * The process's one reader of the activity table: it reads new activity events once per bus
 * notification (or poll) and hands them to every console feed in memory, so a thousand open
 * consoles cost one query per change, not a thousand. Runs only while someone follows it.
 */
export class ActivityTail {
  private readonly followers = new Set<(batch: TTailBatch) => void>();
  private started: Promise<void> | null = null;
  private cursor = 0;
  private floor = 0;
  private readonly seen = new Set<number>();
  private notified = false;
  private reading = false;
  private again = false;
  private stopBus: (() => void) | null = null;
  private poll: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly deps: Pick<TDeps, "db" | "bus" | "log">) {}

  /** Follows the tail; `head` is the id it has read up to, so a resuming feed replays only what lies at or below it. */
  async follow(follower: (batch: TTailBatch) => void): Promise<{ head: number; stop: () => void }> {
    this.followers.add(follower);
    this.started ??= this.start();
    try {
      await this.started;
    } catch (error) {
      // The head could not be read (the database is down): this follower fails, the next one starts over.
      this.followers.delete(follower);
      if (this.followers.size === 0) this.stop();
      throw error;
    }
    return {
      head: this.cursor,
      stop: () => {
        this.followers.delete(follower);
        if (this.followers.size === 0) this.stop();
      },
    };
  }

  /** Stops reading (on shutdown); followers still attached hear nothing more. */
  close(): void {
    this.followers.clear();
    this.stop();
  }

  private async start(): Promise<void> {
    this.stopBus = this.deps.bus.subscribeInbox(() => {
      this.notified = true;
      this.read();
    });
    this.poll = setInterval(() => this.read(), POLL_MS);
    this.cursor = await latestEventId(this.deps.db);
    this.floor = this.cursor;
  }

  private stop(): void {
    this.stopBus?.();
    this.stopBus = null;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    this.started = null;
    this.seen.clear();
  }

  /** One read at a time; a notification during a read reads again right after it. */
  private read(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.readLoop().finally(() => {
      this.reading = false;
    });
  }

  private async readLoop(): Promise<void> {
    try {
      await this.started;
      do {
        this.again = false;
        const notified = this.notified;
        this.notified = false;
        const head = await latestEventId(this.deps.db);
        const rows = await activityBetween(this.deps.db, { after: Math.max(this.floor, this.cursor - LATE_WINDOW), upTo: head, userId: null, limit: READ_LIMIT });
        // A burst larger than one read: go on from the last row right away instead of skipping to the head.
        const more = rows.length >= READ_LIMIT;
        const fresh = rows.filter((r) => !this.seen.has(r.id));
        for (const r of fresh) this.seen.add(r.id);
        this.cursor = more ? Math.max(this.cursor, rows[rows.length - 1]?.id ?? this.cursor) : Math.max(this.cursor, head);
        for (const id of this.seen) if (id < this.cursor - LATE_WINDOW) this.seen.delete(id);
        if (fresh.length > 0 || notified) {
          const batch: TTailBatch = { items: fresh.map((row): TEventItem => ({ id: String(row.id), message: { kind: "event", ...row } })), notified, changed: item(String(this.cursor), { kind: "changed" }) };
          for (const follower of this.followers) follower(batch);
        }
        if (more) this.again = true;
      } while (this.again && this.followers.size > 0);
    } catch (error) {
      this.deps.log.warn({ err: error }, "reading the activity feed failed; the next notification or poll reads again");
    }
  }
}

/**
 * The console's activity feed, resumable from the last event id: trajectory events that change
 * what is waiting (approvals, questions, client tools, steering, devices, run starts and ends),
 * limited to what `scope` may read. Each message carries the global event id (the transport
 * tracks it), so a reconnecting client passes the last id it saw and first receives exactly the
 * events it missed (or one `sync` after a long absence); then it follows the process's tail.
 */
export async function* activityFeed(deps: Pick<TDeps, "db">, tail: ActivityTail, scope: TReadScope, lastEventId: string | null | undefined, signal: AbortSignal | undefined) {
  const mine = (row: TActivityRow) => scope.userId === null || row.userId === scope.userId;
  const queue: TActivityItem[] = [];
  let wake: (() => void) | null = null;
  const following = await tail.follow(({ items, notified, changed }) => {
    const visible = items.filter((i) => mine(i.message));
    queue.push(...visible);
    if (visible.length === 0 && notified) queue.push(changed);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener("abort", onAbort);
  try {
    const { head } = following;
    const resumeFrom = lastEventId && /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : null;
    // Replayed ids: the tail may hand the late ones again.
    const replayed = new Set<number>();
    if (resumeFrom === null || resumeFrom > head) yield item(String(head), { kind: "sync", head });
    else {
      const missed = await activityBetween(deps.db, { after: resumeFrom, upTo: head, userId: scope.userId, limit: REPLAY_LIMIT + 1 });
      if (missed.length > REPLAY_LIMIT) yield item(String(head), { kind: "sync", head });
      else {
        for (const row of missed) {
          replayed.add(row.id);
          yield item(String(row.id), { kind: "event", ...row });
        }
        // Nothing missed: still tell the client where it stands.
        if (missed.length === 0) yield item(String(head), { kind: "changed" });
      }
    }
    while (!signal?.aborted) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        continue;
      }
      for (const next of queue.splice(0)) {
        if (next.message.kind === "event" && replayed.has(next.message.id)) continue;
        yield next;
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    following.stop();
  }
}
