import {
  cancelPendingClientToolRequests,
  clientToolRequestById,
  dueClientToolRequests,
  expireClientToolRequest,
  pendingClientToolRequest,
} from "../../../db/repositories/client-tools";
import { waitingClientTools } from "../../../db/repositories/console-waiting";
import { clientToolAction } from "../../../db/repositories/responses";
import { transact } from "../transact";
import { lockWaitingOn } from "./approval";
import { endWaitingRun } from "./contract";
import type { TPendingKind } from "./kind";

/** A tool only the connected client runs: its result (or private input) settles it; expiry fails the run. */
export const clientToolKind: TPendingKind = {
  type: "client_tool",
  waiting: waitingClientTools,
  find: async (db, id) => {
    const row = await clientToolRequestById(db, id);
    return row ? { type: "client_tool", id, ownerId: row.userId, responseId: row.responseId, sessionId: row.sessionId, callId: row.callId, status: row.status, label: row.name } : null;
  },
  actionOf: async (db, id) => {
    const row = await pendingClientToolRequest(db, id);
    return row ? clientToolAction(row) : null;
  },
  due: dueClientToolRequests,
  expire: async (deps, _host, id) =>
    transact(deps, async (tx, emit, announce) => {
      const request = await expireClientToolRequest(tx, id, deps.now());
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
    const rows = await cancelPendingClientToolRequests(tx, run.id);
    for (const r of rows) announce({ k: "inbox", change: { kind: "client_tool", responseId: run.id, id: r.id } });
  },
};
