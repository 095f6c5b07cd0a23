import { tracked } from "@trpc/server";
import { and, desc, eq, inArray } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { z } from "zod";
import { approvals, responses, users } from "../../../../db/schema";
import { READ_ALL_ROLES } from "../../../core/vocabulary";
import { ZDecisionOptions } from "../../../core/decision";
import { decideApproval } from "../../../services/decide-approval";
import { decisionOptionsFor } from "../../../services/decision-options";
import { authenticatedProcedure, router } from "../init";

/** Whoever decided an approval, joined under their own name (the requester is `users`). */
const decider = alias(users, "decider");

/** Approvals inbox: list, decide, and a live change feed. */
export const approvalsRouter = router({
  list: authenticatedProcedure
    .input(
      z
        .strictObject({
          status: z.enum(["pending", "decided"]).default("pending"),
          /** Only these approvals (the console asks how the ones it was showing were settled). */
          ids: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
        })
        .default({ status: "pending" }),
    )
    .query(async ({ ctx, input }) => {
      const seeAll = READ_ALL_ROLES.includes(ctx.actor.role);
      const statusFilter = input.status === "pending" ? eq(approvals.status, "pending") : inArray(approvals.status, ["approved", "denied", "expired", "cancelled"]);
      const filters = and(statusFilter, input.ids ? inArray(approvals.id, input.ids) : undefined);
      const rows = await ctx.deps.db
        .select({ approval: approvals, agent: responses.agent, userName: users.name, deciderName: decider.name })
        .from(approvals)
        .innerJoin(responses, eq(responses.id, approvals.responseId))
        .innerJoin(users, eq(users.id, approvals.userId))
        .leftJoin(decider, eq(decider.id, approvals.decidedBy))
        .where(seeAll ? filters : and(filters, eq(approvals.userId, ctx.actor.userId)))
        .orderBy(desc(approvals.createdAt))
        .limit(200);
      return rows.map(({ approval: a, agent, userName, deciderName }) => ({
        id: a.id,
        responseId: a.responseId,
        sessionId: a.sessionId,
        agent,
        user: userName,
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
        options: decisionOptionsFor(ctx.deps.agents, agent, a.toolName),
        decidedBy: a.decidedBy,
        /** The decider's display name (null when nobody decided, e.g. expired). */
        decidedByName: deciderName ?? null,
        decidedVia: a.decidedVia,
        decidedAt: a.decidedAt?.toISOString() ?? null,
        expiresAt: a.expiresAt.toISOString(),
        createdAt: a.createdAt.toISOString(),
      }));
    }),
  decide: authenticatedProcedure
    .input(z.strictObject({ approvalId: z.string().min(1), decision: z.enum(["approve", "deny"]), bindingHash: z.string().min(1), ...ZDecisionOptions }))
    .mutation(async ({ ctx, input }) => {
      const { bindingHash, ...decision } = input;
      const decided = await decideApproval(ctx.deps, ctx.actor, { ...decision, via: "console", expectedBindingHash: bindingHash });
      const { approvalId, responseId, edited, grantId, settled, approvals: votes, requiredApprovals } = decided;
      // `settled: false`: one vote of a quorum was recorded; the approval is still pending.
      return { approvalId, responseId, decision: decided.decision, edited, grantId, settled, approvals: votes, requiredApprovals };
    }),
  /** Emits whenever an approval, client-tool request or response changes; the client refetches. */
  onChange: authenticatedProcedure.subscription(async function* ({ ctx, signal }) {
    const queue: string[] = [];
    let wake: (() => void) | null = null;
    const unsubscribe = ctx.deps.bus.subscribeInbox((change) => {
      queue.push(`${change.kind}:${change.responseId}:${Date.now()}`);
      wake?.();
    });
    // One abort listener for the whole subscription (not one per wait, which leaked).
    const onAbort = () => wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      yield tracked(`ready:${Date.now()}`, { kind: "ready" as const });
      while (!signal?.aborted) {
        if (queue.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = null;
          continue;
        }
        const id = queue.splice(0).pop() as string;
        yield tracked(id, { kind: "changed" as const });
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      unsubscribe();
    }
  }),
});
