import { z } from "zod";
import { getQuestion, listQuestions } from "../../../services/questions/list-questions";
import { requestQuestion, ZRequestParams } from "../../../services/questions/request-question";
import { resolveQuestion, ZResolveParams } from "../../../services/questions/resolve-question";
import { waitAnswer, ZWaitParams } from "../../../services/questions/wait-answer";
import { authenticatedProcedure, router } from "../init";

/** The Gateway question methods as typed procedures (console and answer page use these). */
export const questionRouter = router({
  request: authenticatedProcedure.input(ZRequestParams).mutation(({ ctx, input }) => requestQuestion(ctx.deps, ctx.actor, input, "console")),
  waitAnswer: authenticatedProcedure.input(ZWaitParams).query(({ ctx, input }) => waitAnswer(ctx.deps, ctx.actor, input)),
  resolve: authenticatedProcedure.input(ZResolveParams).mutation(({ ctx, input }) => resolveQuestion(ctx.deps, ctx.actor, { ...input, via: "console" })),
  get: authenticatedProcedure.input(z.strictObject({ id: z.string().min(1).max(200) })).query(async ({ ctx, input }) => ({ question: await getQuestion(ctx.deps, ctx.actor, input.id) })),
  list: authenticatedProcedure
    .input(z.strictObject({ status: z.enum(["pending", "all"]).optional() }).optional())
    .query(async ({ ctx, input }) => ({ questions: await listQuestions(ctx.deps, ctx.actor, { status: input?.status }) })),
});
