import { tracked } from "@trpc/server";
import { z } from "zod";
import { activityFeed } from "../../../services/console/activity-feed";
import { listAgentViews } from "../../../services/console/agents";
import { people, usagePerDay, waitingNow } from "../../../services/read/console";
import { ZTimeZone } from "../../../core/time-zone";
import { authenticatedProcedure, router } from "../init";

const ZDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const DAY_MS = 86_400_000;
/** The console's home (what is waiting, live), usage, people and agents. */
export const consoleRouter = router({
  /** Every suspended or steered response and what it waits on, with counts per kind. */
  waiting: authenticatedProcedure.query(({ ctx }) => waitingNow(ctx.deps, ctx.scope)),
  /** Live activity, resumable from the last event id (tRPC passes it back on reconnect). */
  onActivity: authenticatedProcedure
    .input(z.strictObject({ lastEventId: z.string().max(40).nullish() }).optional())
    .subscription(async function* ({ ctx, input, signal }) {
      for await (const { id, message } of activityFeed(ctx.deps, ctx.deps.activity, ctx.scope, input?.lastEventId, signal)) yield tracked(id, message);
    }),
  /** Output and input tokens per day in `timeZone` (the viewer's; UTC if omitted), agent and user (members: their own). At most 366 days. */
  usage: authenticatedProcedure
    .input(z.strictObject({ from: ZDate, to: ZDate, agent: z.string().min(1).max(64).optional(), userId: z.string().min(1).max(200).optional(), timeZone: ZTimeZone.optional() }))
    .query(({ ctx, input }) => {
      const from = input.to.getTime() - input.from.getTime() > 366 * DAY_MS ? new Date(input.to.getTime() - 366 * DAY_MS) : input.from;
      return usagePerDay(ctx.deps, ctx.scope, { ...input, from });
    }),
  /** Users to filter by (members see only themselves). */
  people: authenticatedProcedure.query(({ ctx }) => people(ctx.deps, ctx.scope)),
  /** The configured agents and their policies (read-only). */
  agents: authenticatedProcedure.query(({ ctx }) => listAgentViews(ctx.deps.agents, ctx.deps.reviewer)),
});
