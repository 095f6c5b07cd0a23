import type { Db } from "../../../db/client";
import { claimWaiting, finishResponse, leaseFor, type TResponseRow } from "../../../db/repositories/responses";
import { stepsOf, type TStepWrite, upsertSteps } from "../../../db/repositories/steps";
import type { TSettledQuestion } from "../../tools/types";
import type { TApprovalBinding } from "../../core/binding";
import { refused } from "../../core/errors";
import type { TNewEvent } from "../../core/frames";
import { newId } from "../../core/ids";
import type { TPendingRef } from "../../core/pending";
import type { TDeps } from "../deps";
import type { TClaimedRun, TRunStarter } from "../../ports/run-starter";
import { cancelQueuedSteering } from "../steering";
import type { TAnnounce, TEmit } from "../transact";

/** The approved (possibly edited) operation, as the decision stored it: the attempt re-checks its binding. */
export type TApprovedOperation = TApprovalBinding & { bindingHash: string; originalBindingHash: string | null; originalArguments: unknown };

/**
 * How a pending action settled, as the resumed attempt reads it from its `resolved:<callId>`
 * step: every kind is settled through the same path and read back the same way.
 */
export type TSettlement =
  | { type: "approval"; approved: TApprovedOperation }
  | { type: "approval"; reply: string }
  | { type: "client_tool"; output: unknown }
  | { type: "question"; questions: unknown[]; settled: TSettledQuestion };

/** The step key a settlement is stored under. */
export const resolvedKey = (callId: string): string => `resolved:${callId}`;

/** The marker of a tool call whose run the settling transaction already claimed for one attempt. */
export type TRunClaim = { claim: string };

export type { TClaimedRun, TRunStarter } from "../../ports/run-starter";

type TResumeInput = {
  pending: TPendingRef;
  settlement: TSettlement;
  /** Events of the settlement itself (`approval.resolved`, …), committed before the run moves on. */
  events: readonly TNewEvent[];
  /** The tool call runs right after the resume (an approved operation): claim it for this attempt. */
  runsTool?: boolean;
};

/**
 * Resumes a run suspended on `pending` with its settlement, inside the settling transaction: the
 * run leaves `requires_action` only if it still waits on exactly this action, the settlement is
 * stored as the call's `resolved:` step, and the run is claimed (lease) for this process's host
 * in the same commit, so no other round trip is needed before it continues. Returns the claimed
 * run to start after the commit; throws (rolling everything back) when the run no longer waits.
 */
export async function resumeWith(deps: Pick<TDeps, "config" | "now">, host: TRunStarter, tx: Db, emit: TEmit, responseId: string, input: TResumeInput): Promise<{ run: TClaimedRun; sequence: number }> {
  const claim = newId("claim");
  const now = deps.now();
  const values: TStepWrite[] = [{ responseId, key: resolvedKey(input.pending.callId), status: "completed", result: input.settlement, completedAt: now }];
  if (input.runsTool) values.push({ responseId, key: `tool:${input.pending.callId}`, status: "running", result: { claim } satisfies TRunClaim, completedAt: null });
  // One batch on the transaction's connection (one wait for the database instead of four): none of
  // these needs another's result. The run must still wait on exactly this action, or the caller's
  // transaction rolls all of it back; that is checked first, whatever else failed beside it. The
  // steps read may run before or after the insert: the inserted rows replace their keys either way.
  const [claimed, inserted, appended, stored] = await Promise.allSettled([
    claimWaiting(tx, { id: responseId, pendingId: input.pending.id, owner: host.id, lease: leaseFor(deps.config.leaseMs) }),
    // A call may settle a second pending action (a native call approved, then run on the client): the latest settlement is the call's.
    upsertSteps(tx, values),
    emit(responseId, input.events),
    stepsOf(tx, { id: responseId }),
  ]);
  const [claimedRow] = settledValue(claimed);
  if (!claimedRow) throw refused("conflict", { code: "notWaitingAction" });
  const { workspaceDir, queuedSteering, ...row } = claimedRow;
  const frames = settledValue(appended);
  const steps = [...new Map([...settledValue(stored), ...settledValue(inserted)].map((s) => [s.key, s])).values()];
  const run = { row, claim, steps, steeringQueued: queuedSteering > 0, ...(workspaceDir !== null ? { workspaceDir } : {}), resumedAt: Date.now() };
  // Waiters look for the next boundary after this point: the settlement's first frame, or the last frame so far.
  return { run, sequence: frames[0]?.sequence ?? row.nextFrameSeq - 1 };
}

/** The value of a settled batch member, or its error thrown. */
export function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
}

/**
 * Ends a run that waited on a pending action which settled without letting it go on (a denial,
 * an expiry, a cancellation): queued steering is cancelled and the envelope stored with the status.
 */
export async function endWaitingRun(
  deps: Pick<TDeps, "now">,
  tx: Db,
  emit: TEmit,
  announce: TAnnounce,
  row: TResponseRow,
  status: "completed" | "denied" | "failed" | "cancelled",
  extra: { error?: { code: string; message: string }; cancelReason?: string; events?: readonly TNewEvent[] } = {},
): Promise<number> {
  const steering = await cancelQueuedSteering(deps, tx, row.id);
  const { envelope, stored } = finishResponse(tx, row, status, extra);
  // The terminal row and every event in one wait for the database.
  const [, frames] = await Promise.all([
    stored,
    emit(row.id, [
      ...steering,
      ...(extra.events ?? []),
      ...(extra.error && status === "failed" ? [{ type: "error", data: { error: extra.error }, frame: true }] : []),
      { type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true },
    ]),
  ]);
  announce({ k: "inbox", change: { kind: "response", responseId: row.id } });
  return frames[frames.length - 1]?.sequence ?? 0;
}
