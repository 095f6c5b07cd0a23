import { z } from "zod";
import { simulatePolicy, ZSimulationInput } from "../../../services/policy-simulation";
import { applySuggestion, dismissSuggestion, listSuggestions, ZSuggestionWindow } from "../../../services/policy-suggestions";
import { authenticatedProcedure, router } from "../init";

const ZOne = ZSuggestionWindow.extend({ id: z.string().min(1).max(100) });

/** Rule suggestions and policy simulation (docs/analytics.md): operators, auditors and admins read and simulate; admins apply or dismiss a suggestion. */
export const policyRouter = router({
  suggestions: authenticatedProcedure.input(ZSuggestionWindow).query(({ ctx, input }) => listSuggestions(ctx.deps, ctx.actor, input.days)),
  applySuggestion: authenticatedProcedure.input(ZOne).mutation(({ ctx, input }) => applySuggestion(ctx.deps, { ...ctx.who, actor: ctx.actor }, input.id, input.days)),
  /** Replays the window through a candidate agents file; its only write is the admin-trail row. */
  simulate: authenticatedProcedure.input(ZSimulationInput).mutation(({ ctx, input }) => simulatePolicy(ctx.deps, ctx.who, input)),
  dismissSuggestion: authenticatedProcedure.input(ZOne).mutation(({ ctx, input }) => dismissSuggestion(ctx.deps, { ...ctx.who, actor: ctx.actor }, input.id, input.days)),
});
