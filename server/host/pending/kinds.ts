import type { Db } from "../../../db/client";
import { type TScope, type TWaitingItem, type TWaitingKind, WAITING_KINDS, waitingSteering } from "../../../db/repositories/console-waiting";
import { duePendingActions } from "../../../db/repositories/pending-expiry";
import type { TResponseRow } from "../../../db/repositories/responses";
import type { TRequiredAction } from "../../core/envelope";
import type { TPendingRef, TPendingType } from "../../core/pending";
import type { TDeps } from "../deps";
import type { TAnnounce, TEmit } from "../transact";
import { approvalKind } from "./approval";
import { clientToolKind } from "./client-tool";
import type { TRunStarter } from "./contract";
import type { TCanceller, TPendingKind, TPendingRecord } from "./kind";
import { questionKind } from "./question";

/** Every kind of pending action; adding one is one file and one line here. */
export const PENDING_KINDS: Record<TPendingType, TPendingKind> = {
  approval: approvalKind,
  client_tool: clientToolKind,
  question: questionKind,
};

/** A pending action of any kind by id (pending or settled); null when no kind has it. Ids never collide across kinds. */
export async function findPending(db: Db, id: string): Promise<TPendingRecord | null> {
  const found = await Promise.all(Object.values(PENDING_KINDS).map((kind) => kind.find(db, id)));
  return found.find((r) => r !== null) ?? null;
}

/** The `requiredAction` of a waiting run, whatever it waits on. */
export async function requiredActionOf(db: Db, pending: TPendingRef | null): Promise<TRequiredAction | null> {
  return pending ? PENDING_KINDS[pending.type].actionOf(db, pending.id) : null;
}

/**
 * Everything waiting in the workspace (or for one user): each pending kind's own list, plus the
 * steering messages still queued, with exact counts per kind.
 */
export async function listWaiting(db: Db, scope: TScope): Promise<{ items: TWaitingItem[]; counts: Record<TWaitingKind, number> }> {
  const parts = await Promise.all([...Object.values(PENDING_KINDS).map((kind) => kind.waiting(db, scope)), waitingSteering(db, scope)]);
  const counts = Object.fromEntries(WAITING_KINDS.map((k) => [k, 0])) as Record<TWaitingKind, number>;
  for (const part of parts) for (const [k, n] of Object.entries(part.counts)) counts[k as TWaitingKind] += n ?? 0;
  return { items: parts.flatMap((p) => p.items), counts };
}

/** Cancels whatever a cancelled run still has pending, of every kind, inside the caller's transaction. */
export async function cancelPendingOf(tx: Db, emit: TEmit, announce: TAnnounce, run: TResponseRow, by: TCanceller, now: Date): Promise<void> {
  for (const kind of Object.values(PENDING_KINDS)) await kind.cancelFor(tx, emit, announce, run, by, now);
}

/** Expires one pending action of any kind by id (a decider found it due); resumed runs start on `host`. */
export async function expirePending(deps: TDeps, host: TRunStarter, pending: { type: TPendingType; id: string }): Promise<boolean> {
  const outcome = await PENDING_KINDS[pending.type].expire(deps, host, pending.id);
  if (outcome) deps.observe.metrics.expired(pending.type);
  if (outcome?.claimed) host.startClaimed(outcome.claimed);
  return outcome !== null;
}

/**
 * The expiry sweep: every kind's due rows in one statement, expired one transaction each. Idempotent across
 * replicas (each expiry is a conditional update); a run resumed by an expiry starts here.
 */
export async function expireDue(deps: TDeps, host: TRunStarter, limit = 200): Promise<void> {
  const now = deps.now();
  const rows = await duePendingActions(
    deps.db,
    Object.values(PENDING_KINDS).map((kind) => kind.due(now)),
    limit,
  );
  for (const row of rows) if (row.type in PENDING_KINDS) await expirePending(deps, host, row);
}
