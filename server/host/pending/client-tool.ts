import { and, eq, lte, sql } from "drizzle-orm";
import { waitingClientTools } from "../../../db/repositories/console-waiting";
import { clientToolAction } from "../../../db/repositories/responses";
import { clientToolRequests } from "../../../db/schema";
import { transact } from "../transact";
import { lockWaitingOn } from "./approval";
import { endWaitingRun } from "./contract";
import type { TPendingKind } from "./kind";

/** A tool only the connected client runs: its result (or private input) settles it; expiry fails the run. */
export const clientToolKind: TPendingKind = {
  type: "client_tool",
  waiting: waitingClientTools,
  find: async (db, id) => {
    const [row] = await db.select().from(clientToolRequests).where(eq(clientToolRequests.id, id));
    return row ? { type: "client_tool", id, ownerId: row.userId, responseId: row.responseId, sessionId: row.sessionId, callId: row.callId, status: row.status, label: row.name } : null;
  },
  actionOf: async (db, id) => {
    const [row] = await db.select().from(clientToolRequests).where(and(eq(clientToolRequests.id, id), eq(clientToolRequests.status, "pending")));
    return row ? clientToolAction(row) : null;
  },
  due: (now) => sql`select ${"client_tool"}::text as type, ${clientToolRequests.id} as id from ${clientToolRequests} where ${clientToolRequests.status} = 'pending' and ${clientToolRequests.expiresAt} <= ${now.toISOString()}::timestamptz`,
  expire: async (deps, _host, id) =>
    transact(deps, async (tx, emit, announce) => {
      const [request] = await tx
        .update(clientToolRequests)
        .set({ status: "expired" })
        .where(and(eq(clientToolRequests.id, id), eq(clientToolRequests.status, "pending"), lte(clientToolRequests.expiresAt, deps.now())))
        .returning();
      if (!request) return null;
      const events = [{ type: "client_tool.expired", data: { clientToolId: id }, frame: false, transport: "system" as const }];
      announce({ k: "inbox", change: { kind: "client_tool", responseId: request.responseId, id } });
      const run = await lockWaitingOn(tx, request.responseId, id);
      const error = { code: "client_tool_expired", message: `Nobody submitted a result for ${request.name} before it expired.` };
      if (run) await endWaitingRun(deps, tx, emit, announce, run, "failed", { error, events });
      else await emit(request.responseId, events);
      return { claimed: null };
    }),
  cancelFor: async (tx, _emit, announce, run) => {
    const rows = await tx
      .update(clientToolRequests)
      .set({ status: "cancelled" })
      .where(and(eq(clientToolRequests.responseId, run.id), eq(clientToolRequests.status, "pending")))
      .returning({ id: clientToolRequests.id });
    for (const r of rows) announce({ k: "inbox", change: { kind: "client_tool", responseId: run.id, id: r.id } });
  },
};
