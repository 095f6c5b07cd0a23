import { z } from "zod";
import { applySuggestion, dismissSuggestion, listSuggestions, ZSuggestionWindow } from "../../../services/policy-suggestions";
import { authenticatedProcedure, router } from "../init";

const ZOne = ZSuggestionWindow.extend({ id: z.string().min(1).max(100) });

/** Rule suggestions (docs/analytics.md): operators, auditors and admins read them; admins apply or dismiss one. */
export const policyRouter = router({
  suggestions: authenticatedProcedure.input(ZSuggestionWindow).query(({ ctx, input }) => listSuggestions(ctx.deps, ctx.actor, input.days)),
  applySuggestion: authenticatedProcedure.input(ZOne).mutation(({ ctx, input }) => applySuggestion(ctx.deps, { ...ctx.who, actor: ctx.actor }, input.id, input.days)),
  dismissSuggestion: authenticatedProcedure.input(ZOne).mutation(({ ctx, input }) => dismissSuggestion(ctx.deps, { ...ctx.who, actor: ctx.actor }, input.id, input.days)),
});
