import { z } from "zod";
import { reviewerSentenceCode } from "../../../core/reviewer-sentences";
import { decisionRefusalCode, refusalSentence, type TDecisionRefusal } from "../../../core/separation-of-duties";
import type { TActor } from "../../../core/actor";
import { RISKS } from "../../../core/vocabulary";
import { votesOf } from "../../../services/approval-votes";
import { decideMany } from "../../../services/console/bulk-decide";
import { decisionOptionsFor, NO_DECISION_OPTIONS, nativeEditSchemas } from "../../../services/decision-options";
import { approvalContext, approvalFiles, inboxPage } from "../../../services/read/console";
import { authenticatedProcedure, router } from "../init";
import { writerProcedure } from "./console-procedures";

const ZId = z.string().min(1).max(200);

/** Why `actor` may not decide: the server's sentence and its code (both null: it may). */
function refusalOf(actor: TActor, ...rest: [Parameters<typeof decisionRefusalCode>[1], Parameters<typeof decisionRefusalCode>[2]]): { refusal: string | null; refusalCode: TDecisionRefusal | null } {
  const code = decisionRefusalCode(actor, ...rest);
  return { refusal: code ? refusalSentence(code) : null, refusalCode: code };
}

/** The approvals inbox: filtered lists, session context, and bulk decisions (never for high risk). */
export const inboxRouter = router({
  list: authenticatedProcedure
    .input(
      z.strictObject({
        status: z.enum(["pending", "decided"]),
        agent: z.string().min(1).max(64).optional(),
        userId: ZId.optional(),
        risks: z.array(z.enum(RISKS)).max(3).optional(),
        reviewer: z.enum(["ask", "none"]).optional(),
        olderThanMs: z.number().int().min(0).max(30 * 86_400_000).optional(),
        /** Only approvals the caller's teams decide (their approvers name one of its groups, docs/sso.md#teams). */
        myTeams: z.boolean().optional(),
        cursor: z.string().max(400).nullish(),
        limit: z.number().int().min(1).max(200).default(100),
        /** Sent by tRPC's infinite queries; the decided history pages forward only. */
        direction: z.enum(["forward", "backward"]).optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const { myTeams, ...filter } = input;
      const page = await inboxPage(ctx.deps, ctx.scope, { ...filter, ...(myTeams ? { teams: ctx.actor.groups ?? [] } : {}) });
      const votes = await votesOf(ctx.deps.db, page.rows.filter((a) => a.requiredApprovals > 1).map((a) => a.id));
      const nativeSchemas = await nativeEditSchemas(ctx.deps, page.rows);
      return {
        nextCursor: page.nextCursor,
        rows: page.rows.map(({ cursorAt: _, agentPolicy, ...a }) => ({
          ...a,
          /** What the approver may add to a decision: an edit, and the standing grants the agent allows. */
          // A quorum approval is approved as asked: no edit, no standing grant (the server refuses both).
          options: a.requiredApprovals > 1 ? NO_DECISION_OPTIONS : decisionOptionsFor(ctx.deps.agents, a.agent, a, nativeSchemas.get(a.id)),
          /** Why the caller may not decide this approval (the server's own rule), or null; `refusalCode` is the same as a code for the console's languages. */
          ...refusalOf(ctx.actor, a, ctx.deps.agents.decisionPolicyOf(a.agent, agentPolicy)),
          /** A reviewer's rationale the server itself wrote, as a code (null: the reviewer's own words, shown as written). */
          reviewerRationaleCode: reviewerSentenceCode(a.reviewerRationale),
          /** A quorum's votes so far, oldest first (empty without a quorum). */
          votes: votes.get(a.id) ?? [],
          decidedAt: a.decidedAt?.toISOString() ?? null,
          expiresAt: a.expiresAt.toISOString(),
          createdAt: a.createdAt.toISOString(),
        })),
      };
    }),
  /** The last few turns of the approval's session, up to its response. */
  context: authenticatedProcedure.input(z.strictObject({ approvalId: ZId })).query(({ ctx, input }) => approvalContext(ctx.deps, ctx.scope, input.approvalId)),
  /** The files of the approval's run so far: those it was given and those its agent attached (previews and downloads through `/v1`). */
  files: authenticatedProcedure.input(z.strictObject({ approvalId: ZId })).query(({ ctx, input }) => approvalFiles(ctx.deps, ctx.scope, input.approvalId)),
  /** Approves or denies up to 50 low/medium-risk approvals; refused whole when any is high risk. */
  decideMany: writerProcedure
    .input(z.strictObject({ decision: z.enum(["approve", "deny"]), items: z.array(z.strictObject({ approvalId: ZId, bindingHash: z.string().min(1).max(200) })).min(1).max(50) }))
    .mutation(({ ctx, input }) => decideMany(ctx.deps, ctx.actor, input)),
});
