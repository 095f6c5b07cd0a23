import { tracked } from "@trpc/server";
import { z } from "zod";
import { cancelResponse } from "../../../services/cancel-response";
import { isTerminalFrame } from "../../../services/follow-frames";
import { followResponse, recentResponses, responseDetail, sessionUsage } from "../../../services/read/responses";
import { steerResponse } from "../../../services/steer-response";
import { askSideQuestion } from "../../../services/ask-side-question";
import { authenticatedProcedure, router } from "../init";

/** Responses: list, one with its trajectory, cancel, and a live frame feed. */
export const responsesRouter = router({
  list: authenticatedProcedure.query(({ ctx }) => recentResponses(ctx.deps, ctx.scope)),
  get: authenticatedProcedure.input(z.strictObject({ responseId: z.string().min(1) })).query(({ ctx, input }) => responseDetail(ctx.deps, ctx.scope, input.responseId)),
  /** Steers a message into the running response from the console (run authority). */
  steer: authenticatedProcedure
    .input(z.strictObject({ responseId: z.string().min(1), text: z.string().trim().min(1).max(10_000) }))
    .mutation(async ({ ctx, input }) => steerResponse(ctx.deps, ctx.actor, { responseId: input.responseId, text: input.text, via: "console", authorityKind: "run", assertCurrent: () => true })),
  /** Asks the run's harness a side question (plugin API 1.2): answered beside the run, recorded in its trajectory only. */
  askSideQuestion: authenticatedProcedure
    .input(z.strictObject({ responseId: z.string().min(1), question: z.string().trim().min(1).max(10_000) }))
    .mutation(async ({ ctx, input, signal }) => askSideQuestion(ctx.deps, ctx.actor, { responseId: input.responseId, question: input.question, via: "console", signal })),
  /** Output-token usage of a session: per response and in total. */
  sessionUsage: authenticatedProcedure.input(z.strictObject({ sessionId: z.string().min(1) })).query(({ ctx, input }) => sessionUsage(ctx.deps, ctx.scope, input.sessionId)),
  cancel: authenticatedProcedure.input(z.strictObject({ responseId: z.string().min(1) })).mutation(async ({ ctx, input }) => {
    return (await cancelResponse(ctx.deps, ctx.actor, { responseId: input.responseId, via: "console" })).envelope;
  }),
  /** Live frames of one response, resumable after the last seen sequence. */
  onFrames: authenticatedProcedure
    .input(z.strictObject({ responseId: z.string().min(1), lastEventId: z.string().nullish() }))
    .subscription(async function* ({ ctx, input, signal }) {
      const after = input.lastEventId ? Number(input.lastEventId) : -1;
      const abort = new AbortController();
      signal?.addEventListener("abort", () => abort.abort(), { once: true });
      const frames = await followResponse(ctx.deps, ctx.scope, { responseId: input.responseId, after: Number.isInteger(after) ? after : -1 }, abort.signal);
      for await (const frame of frames) {
        yield tracked(String(frame.sequence), frame);
        if (isTerminalFrame(frame)) break;
      }
    }),
});
