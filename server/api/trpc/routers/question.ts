import { TRPCError } from "@trpc/server";
import { readScope } from "../../../core/read-scope";
import { z } from "zod";
import { getQuestion, listQuestions, listQuestionsPage } from "../../../services/questions/list-questions";
import { requestQuestion, ZRequestParams } from "../../../services/questions/request-question";
import { resolveQuestion, ZResolveParams } from "../../../services/questions/resolve-question";
import { waitAnswer, ZWaitParams } from "../../../services/questions/wait-answer";
import { authenticatedProcedure, publicProcedure, router } from "../init";
import { questionContext } from "../../../services/read/question-context";
import { pageInput } from "./page-input";

const ZQuestionRef = z.strictObject({ id: z.string().min(1) });

/**
 * The signed-in caller, or else whoever the answer-link cookie of this very question stands for
 * (see server/api/shared/answer-grant.ts): such a cookie reads and answers that question, nothing else.
 */
const questionAccess = publicProcedure.use(async ({ ctx, getRawInput, next }) => {
  const id = ((await getRawInput().catch(() => null)) as { id?: unknown } | null)?.id;
  const viaLink = !ctx.actor && typeof id === "string" ? await ctx.answerLink?.(id) : null;
  const actor = ctx.actor ?? viaLink ?? null;
  if (!actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Authentication required" });
  return next({ ctx: { ...ctx, actor, scope: readScope(actor), viaLink: Boolean(viaLink) } });
});

/** The Gateway question methods as typed procedures (console and answer page use these). */
export const questionRouter = router({
  request: authenticatedProcedure.input(ZRequestParams).mutation(({ ctx, input }) => requestQuestion(ctx.deps, ctx.actor, input, "console")),
  waitAnswer: authenticatedProcedure.input(ZWaitParams).query(({ ctx, input }) => waitAnswer(ctx.deps, ctx.actor, input)),
  resolve: questionAccess.input(ZResolveParams).mutation(({ ctx, input }) => resolveQuestion(ctx.deps, ctx.actor, { ...input, via: "console" })),
  get: questionAccess.input(ZQuestionRef).query(async ({ ctx, input }) => ({ question: await getQuestion(ctx.deps, ctx.actor, input.id) })),
  /** Which agent and task ask, and the run's last assistant message (only what the caller may read). */
  context: questionAccess.input(ZQuestionRef).query(({ ctx, input }) => questionContext(ctx.deps, ctx.scope, input.id)),
  list: authenticatedProcedure
    .input(z.strictObject({ status: z.enum(["pending", "all"]).optional() }).optional())
    .query(async ({ ctx, input }) => ({ questions: await listQuestions(ctx.deps, ctx.actor, { status: input?.status }) })),
  /** One page of the questions the caller may see (pending, settled or all), newest first, and the next page's cursor. */
  page: authenticatedProcedure
    .input(z.strictObject({ status: z.enum(["pending", "settled", "all"]).default("pending"), ...pageInput }).default({ status: "pending", limit: 50 }))
    .query(({ ctx, input }) => listQuestionsPage(ctx.deps, ctx.scope, input)),
  /** Who the answer page answers as for this question: the signed-in user, or the answer link's key owner (`viaLink`). */
  viewer: questionAccess.input(ZQuestionRef).query(({ ctx }) => ({ userId: ctx.actor.userId, name: ctx.actor.name, email: ctx.actor.email ?? null, role: ctx.actor.role, viaLink: ctx.viaLink })),
});
