import { approvalById, cancelPendingApprovalsOf, dueApprovalsQuery, expireDueApproval, lockRunWaitingOn, pendingApprovalById } from "../../../db/repositories/approvals";
import { waitingApprovals } from "../../../db/repositories/console-waiting";
import { approvalAction } from "../../../db/repositories/responses";
import { transact } from "../transact";
import { endWaitingRun } from "./contract";
import type { TPendingKind } from "./kind";

/** Locks the run that waits on exactly this pending row; null when it waits on something else or is settled. */
export const lockWaitingOn = lockRunWaitingOn;

/** An approval of a protected operation: approve (as asked or edited), deny, reply instead, expire, cancel. */
export const approvalKind: TPendingKind = {
  type: "approval",
  waiting: waitingApprovals,
  find: async (db, id) => {
    const row = await approvalById(db, id);
    return row ? { type: "approval", id, ownerId: row.userId, responseId: row.responseId, sessionId: row.sessionId, callId: row.callId, status: row.status, label: row.toolName } : null;
  },
  actionOf: async (db, id) => {
    const row = await pendingApprovalById(db, id);
    return row ? approvalAction(row) : null;
  },
  due: dueApprovalsQuery,
  expire: async (deps, _host, id) =>
    transact(deps, async (tx, emit, announce) => {
      const approval = await expireDueApproval(tx, id, deps.now(), deps.now());
      if (!approval) return null;
      const events = [{ type: "approval.expired", data: { approvalId: id }, frame: false, transport: "system" as const }];
      announce({ k: "inbox", change: { kind: "approval", responseId: approval.responseId, id } });
      const run = await lockWaitingOn(tx, approval.responseId, id);
      if (run) await endWaitingRun(deps, tx, emit, announce, run, "denied", { events });
      else await emit(approval.responseId, events);
      return { claimed: null };
    }),
  cancelFor: async (tx, _emit, announce, run, by, now) => {
    const ids = await cancelPendingApprovalsOf(tx, run.id, by, now);
    for (const approvalId of ids) announce({ k: "inbox", change: { kind: "approval", responseId: run.id, id: approvalId } });
  },
};
