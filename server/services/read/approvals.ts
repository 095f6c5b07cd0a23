import { and, desc, eq, inArray } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { approvals, responses, users } from "../../../db/schema";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { decisionOptionsFor, nativeEditSchemas } from "../decision-options";

/** Whoever decided an approval, joined under their own name (the requester is `users`). */
const decider = alias(users, "decider");

/** The newest 200 approvals `scope` may read, pending or decided (or only `ids`), with what the approver may add to a decision. */
export async function listApprovals(deps: Pick<TDeps, "db" | "agents">, scope: TReadScope, input: { status: "pending" | "decided"; ids?: string[] }) {
  const statusFilter = input.status === "pending" ? eq(approvals.status, "pending") : inArray(approvals.status, ["approved", "denied", "expired", "cancelled"]);
  const filters = and(statusFilter, input.ids ? inArray(approvals.id, input.ids) : undefined);
  const rows = await deps.db
    .select({ approval: approvals, agent: responses.agent, userName: users.name, userEmail: users.email, deciderName: decider.name, deciderEmail: decider.email })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .innerJoin(users, eq(users.id, approvals.userId))
    .leftJoin(decider, eq(decider.id, approvals.decidedBy))
    .where(scope.userId === null ? filters : and(filters, eq(approvals.userId, scope.userId)))
    .orderBy(desc(approvals.createdAt))
    .limit(200);
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
