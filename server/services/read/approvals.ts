import { approvalsWithPeople } from "../../../db/repositories/approvals";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { decisionOptionsFor, nativeEditSchemas } from "../decision-options";

/** The newest 200 approvals `scope` may read, pending or decided (or only `ids`), with what the approver may add to a decision. */
export async function listApprovals(deps: Pick<TDeps, "db" | "agents">, scope: TReadScope, input: { status: "pending" | "decided"; ids?: string[] }) {
  const rows = await approvalsWithPeople(deps.db, { status: input.status, ...(input.ids ? { ids: input.ids } : {}), userId: scope.userId });
  const nativeSchemas = await nativeEditSchemas(deps, rows.map((r) => r.approval));
  return rows.map(({ approval: a, agent, userName, userEmail, deciderName, deciderEmail }) => ({
    id: a.id,
    responseId: a.responseId,
    sessionId: a.sessionId,
    agent,
    user: userName,
    /** The requester's email, shown beside the name. */
    userEmail,
    action: a.action,
    toolName: a.toolName,
    message: a.message,
    arguments: a.arguments,
    cwd: a.cwd,
    risk: a.risk,
    reviewer: a.reviewer,
    reviewerRationale: a.reviewerRationale,
    bindingHash: a.bindingHash,
    status: a.status,
    originalArguments: a.originalArguments ?? null,
    replyMessage: a.replyMessage,
    grantId: a.grantId,
    /** What the approver may add to a decision for this agent and tool. */
    options: decisionOptionsFor(deps.agents, agent, a, nativeSchemas.get(a.id)),
    decidedBy: a.decidedBy,
    /** The decider's display name (null when nobody decided, e.g. expired). */
    decidedByName: deciderName ?? null,
    /** The decider's email, shown beside the name. */
    decidedByEmail: deciderEmail ?? null,
    decidedVia: a.decidedVia,
    decidedAt: a.decidedAt?.toISOString() ?? null,
    expiresAt: a.expiresAt.toISOString(),
    createdAt: a.createdAt.toISOString(),
  }));
}
