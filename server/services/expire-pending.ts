import { and, eq, lte } from "drizzle-orm";
import { finishResponse, lockActiveOrSuspended } from "../../db/repositories/responses";
import { approvals, clientToolRequests } from "../../db/schema";
import type { TDeps } from "../host/deps";
import { cancelQueuedSteering } from "../host/steering";
import { transact } from "../host/transact";
import { expireDueQuestions } from "./questions/expire-question";

/**
 * Expires pending approvals and client-tool requests whose time is up and settles their
 * responses (denied, or failed for client tools) in the same transaction. Idempotent.
 */
export async function expirePending(deps: TDeps): Promise<void> {
  const now = deps.now();
  const dueApprovals = await deps.db
    .select({ id: approvals.id })
    .from(approvals)
    .where(and(eq(approvals.status, "pending"), lte(approvals.expiresAt, now)))
    .limit(200);
  for (const { id } of dueApprovals) await expireApproval(deps, id);
  const dueRequests = await deps.db
    .select({ id: clientToolRequests.id })
    .from(clientToolRequests)
    .where(and(eq(clientToolRequests.status, "pending"), lte(clientToolRequests.expiresAt, now)))
    .limit(200);
  for (const { id } of dueRequests) await expireClientTool(deps, id);
  await expireDueQuestions(deps);
}

/** Expires one approval if it is still pending and due; returns whether it did. */
export async function expireApproval(deps: TDeps, approvalId: string): Promise<boolean> {
  const expired = await transact(deps, async (tx, emit) => {
    const [approval] = await tx
      .update(approvals)
      .set({ status: "expired", decidedAt: deps.now(), decidedVia: "system" })
      .where(and(eq(approvals.id, approvalId), eq(approvals.status, "pending"), lte(approvals.expiresAt, deps.now())))
      .returning();
    if (!approval) return null;
    const row = await lockActiveOrSuspended(tx, approval.responseId);
    const events = [{ type: "approval.expired", data: { approvalId }, frame: false, transport: "system" as const }];
    if (!row) {
      await emit(approval.responseId, events);
      return approval;
    }
    await emit(row.id, events);
    await cancelQueuedSteering(deps, tx, emit, row.id);
    const envelope = await finishResponse(tx, row, "denied");
    await emit(row.id, [{ type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true }]);
    return approval;
  });
  if (expired) deps.bus.publishInbox({ kind: "approval", responseId: expired.responseId, id: approvalId });
  return Boolean(expired);
}

/** Expires one client-tool request if it is still pending and due; the response fails. */
export async function expireClientTool(deps: TDeps, requestId: string): Promise<boolean> {
  const expired = await transact(deps, async (tx, emit) => {
    const [request] = await tx
      .update(clientToolRequests)
      .set({ status: "expired" })
      .where(and(eq(clientToolRequests.id, requestId), eq(clientToolRequests.status, "pending"), lte(clientToolRequests.expiresAt, deps.now())))
      .returning();
    if (!request) return null;
    const row = await lockActiveOrSuspended(tx, request.responseId);
    const events = [{ type: "client_tool.expired", data: { clientToolId: requestId }, frame: false, transport: "system" as const }];
    if (!row) {
      await emit(request.responseId, events);
      return request;
    }
    const error = { code: "client_tool_expired", message: `Nobody submitted a result for ${request.name} before it expired.` };
    await emit(row.id, events);
    await cancelQueuedSteering(deps, tx, emit, row.id);
    const envelope = await finishResponse(tx, row, "failed", { error });
    await emit(row.id, [{ type: "error", data: { error }, frame: true }, { type: "response.completed", data: { ...envelope, responseId: row.id }, frame: true }]);
    return request;
  });
  if (expired) deps.bus.publishInbox({ kind: "client_tool", responseId: expired.responseId, id: requestId });
  return Boolean(expired);
}

