import type { Db } from "../../../db/client";
import type { TResponseRow } from "../../../db/repositories/responses";
import type { TScope, TWaitingItem, TWaitingKind } from "../../../db/repositories/console-waiting";
import type { TDueQuery } from "../../../db/repositories/pending-expiry";
import type { TRequiredAction } from "../../core/envelope";
import type { TPendingType } from "../../core/pending";
import type { TTransport } from "../../core/vocabulary";
import type { TDeps } from "../deps";
import type { TAnnounce, TEmit } from "../transact";
import type { TClaimedRun, TRunStarter } from "./contract";

/**
 * What every kind can say about one of its rows, pending or settled: whose it is, which run and
 * session and tool call it belongs to, and where it stands. `label` is the kind's own name for it
 * (the tool's name for approvals and client tools, the question's origin for questions).
 */
export type TPendingRecord = {
  type: TPendingType;
  id: string;
  ownerId: string;
  responseId: string | null;
  sessionId: string | null;
  callId: string | null;
  status: string;
  label: string;
};

/** Who settles pending actions besides their deciders: the system (expiry) or a cancelling person. */
export type TCanceller = { userId: string | null; via: TTransport };

/**
 * One kind of pending action. The attempt opens it (inside its suspension commit); a service
 * settles it and resumes the run with `resumeWith`; these are the parts every kind answers the
 * same way, so expiry, cancellation and the wire's `requiredAction` never switch on the kind.
 */
export type TPendingKind = {
  type: TPendingType;
  /** One row of this kind by id, whatever its status; null when this kind has no such row. */
  find: (db: Db, id: string) => Promise<TPendingRecord | null>;
  /** The `requiredAction` clients see for the pending row `id`; null once it is not pending. */
  actionOf: (db: Db, id: string) => Promise<TRequiredAction | null>;
  /** What the console's "waiting" view lists of this kind (oldest first) and how many there are. */
  waiting: (db: Db, scope: TScope) => Promise<{ items: TWaitingItem[]; counts: Partial<Record<TWaitingKind, number>> }>;
  /** The query of this kind's pending rows whose time is up, as `(type, id)` rows (the sweep unions every kind's). */
  due: (now: Date) => TDueQuery;
  /**
   * Expires one due row in its own transaction and settles the run waiting on it (ended, or
   * resumed with an "expired" result claimed for `host`). Idempotent; null when nothing expired.
   */
  expire: (deps: TDeps, host: TRunStarter, id: string) => Promise<{ claimed: TClaimedRun | null } | null>;
  /** Cancels every pending row of this kind of a response that is being cancelled, inside the caller's transaction. */
  cancelFor: (tx: Db, emit: TEmit, announce: TAnnounce, run: TResponseRow, by: TCanceller, now: Date) => Promise<void>;
};
