import { z } from "zod";
import { ZDecisionOptions } from "../../../core/decision";
import { ZAnswers } from "../../../core/questions/schema";
import { answerByLink, decideByLink, getLinkView } from "../../../services/act-by-link";
import { publicProcedure, router } from "../init";

/** A link token from a notification: 32 random bytes, base64url. */
const ZToken = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "This link is malformed; open the console and sign in instead.");

/**
 * Single-use links from email notifications. Authenticated by the token alone (no session):
 * `get` shows what the link is for without using it; `decide` (approve, deny, or deny with a
 * reply the agent receives) and `answer` use it up.
 */
export const linkRouter = router({
  get: publicProcedure.input(z.strictObject({ token: ZToken })).query(({ ctx, input }) => getLinkView(ctx.deps, input.token)),
  decide: publicProcedure
    .input(z.strictObject({ token: ZToken, decision: z.enum(["approve", "deny"]), message: ZDecisionOptions.message }))
    .mutation(({ ctx, input }) => decideByLink(ctx.deps, input)),
  answer: publicProcedure.input(z.strictObject({ token: ZToken, answers: ZAnswers })).mutation(({ ctx, input }) => answerByLink(ctx.deps, input)),
});
