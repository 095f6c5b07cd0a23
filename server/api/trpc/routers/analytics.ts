import { decisionAnalytics, decisionOutcomes, decisionRequests, decisionTimesOf, expiriesOf, repeatedOf, ZDecisionQuery, ZDecisionRequestsQuery } from "../../../services/read/analytics";
import { authenticatedProcedure, router } from "../init";

/** Decision analytics (docs/analytics.md): every role; a member's figures cover its own requests only. */
export const analyticsRouter = router({
  /** The figures of a period: requests per day by outcome, time to decide, repeated requests, expiries. */
  decisions: authenticatedProcedure.input(ZDecisionQuery).query(({ ctx, input }) => decisionAnalytics(ctx.deps, ctx.scope, input)),
  /** One chart each (the console asks for each on its own): totals and requests per day, time to decide, repeated requests, expiries. */
  outcomes: authenticatedProcedure.input(ZDecisionQuery).query(({ ctx, input }) => decisionOutcomes(ctx.deps, ctx.scope, input)),
  times: authenticatedProcedure.input(ZDecisionQuery).query(({ ctx, input }) => decisionTimesOf(ctx.deps, ctx.scope, input)),
  repeated: authenticatedProcedure.input(ZDecisionQuery).query(({ ctx, input }) => repeatedOf(ctx.deps, ctx.scope, input)),
  expired: authenticatedProcedure.input(ZDecisionQuery).query(({ ctx, input }) => expiriesOf(ctx.deps, ctx.scope, input)),
  /** The requests behind a figure (a day, an outcome, a repeated request), newest first. */
  requests: authenticatedProcedure.input(ZDecisionRequestsQuery).query(({ ctx, input }) => decisionRequests(ctx.deps, ctx.scope, input)),
});
