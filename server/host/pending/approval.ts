import { and, eq, lte, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { waitingApprovals } from "../../../db/repositories/console-waiting";
import { approvalAction } from "../../../db/repositories/responses";
import { approvals, responses } from "../../../db/schema";
import { transact } from "../transact";
import { endWaitingRun } from "./contract";
import type { TPendingKind } from "./kind";

/** Locks the run that waits on exactly this pending row; null when it waits on something else or is settled. */
export async function lockWaitingOn(tx: Db, responseId: string, pendingId: string) {
  const [row] = await tx
    .update(responses)
    .set({ updatedAt: sql`now()` })
    .where(and(eq(responses.id, responseId), eq(responses.status, "requires_action"), sql`${responses.pendingAction}->>'id' = ${pendingId}`))
    .returning();
  return row ?? null;
}

/** An approval of a protected operation: approve (as asked or edited), deny, reply instead, expire, cancel. */
export const approvalKind: TPendingKind = {
  type: "approval",
  waiting: waitingApprovals,
  find: async (db, id) => {
    const [row] = await db.select().from(approvals).where(eq(approvals.id, id));
    return row ? { type: "approval", id, ownerId: row.userId, responseId: row.responseId, sessionId: row.sessionId, callId: row.callId, status: row.status, label: row.toolName } : null;
  },
  actionOf: async (db, id) => {
    const [row] = await db.select().from(approvals).where(and(eq(approvals.id, id), eq(approvals.status, "pending")));
    return row ? approvalAction(row) : null;
  },
  due: (now) => sql`select ${"approval"}::text as type, ${approvals.id} as id from ${approvals} where ${approvals.status} = 'pending' and ${approvals.expiresAt} <= ${now.toISOString()}::timestamptz`,
  expire: async (deps, _host, id) =>
    transact(deps, async (tx, emit, announce) => {
      const [approval] = await tx
        .update(approvals)
        .set({ status: "expired", decidedAt: deps.now(), decidedVia: "system" })
        .where(and(eq(approvals.id, id), eq(approvals.status, "pending"), lte(approvals.expiresAt, deps.now())))
        .returning();
      if (!approval) return null;
      const events = [{ type: "approval.expired", data: { approvalId: id }, frame: false, transport: "system" as const }];
      announce({ k: "inbox", change: { kind: "approval", responseId: approval.responseId, id } });
      const run = await lockWaitingOn(tx, approval.responseId, id);
      if (run) await endWaitingRun(deps, tx, emit, announce, run, "denied", { events });
      else await emit(approval.responseId, events);
      return { claimed: null };
    }),
  cancelFor: async (tx, _emit, announce, run, by, now) => {
    const rows = await tx
      .update(approvals)
      .set({ status: "cancelled", decidedAt: now, decidedVia: by.via, decidedBy: by.userId })
      .where(and(eq(approvals.responseId, run.id), eq(approvals.status, "pending")))
      .returning({ id: approvals.id });
    for (const r of rows) announce({ k: "inbox", change: { kind: "approval", responseId: run.id, id: r.id } });
  },
};
