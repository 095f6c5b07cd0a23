import { z } from "zod";
import { ZDecisionOptions } from "../../../core/decision";
import { decideApproval } from "../../../services/decide-approval";
import { listApprovals } from "../../../services/read/approvals";
import { authenticatedProcedure, router } from "../init";

/** Approvals: list and decide (the console follows changes through `console.onActivity`). */
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
    .query(({ ctx, input }) => listApprovals(ctx.deps, ctx.scope, input)),
  decide: authenticatedProcedure
    .input(z.strictObject({ approvalId: z.string().min(1), decision: z.enum(["approve", "deny"]), bindingHash: z.string().min(1), ...ZDecisionOptions }))
    .mutation(async ({ ctx, input }) => {
      const { bindingHash, ...decision } = input;
      const decided = await decideApproval(ctx.deps, ctx.actor, { ...decision, via: "console", expectedBindingHash: bindingHash });
      const { approvalId, responseId, edited, grantId, settled, approvals: votes, requiredApprovals } = decided;
      // `settled: false`: one vote of a quorum was recorded; the approval is still pending.
      return { approvalId, responseId, decision: decided.decision, edited, grantId, settled, approvals: votes, requiredApprovals };
    }),
});
