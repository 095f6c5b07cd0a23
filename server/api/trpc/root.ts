import { approvalsRouter } from "./routers/approvals";
import { responsesRouter } from "./routers/responses";
import { authenticatedProcedure, router } from "./init";

export const appRouter = router({
  me: authenticatedProcedure.query(({ ctx }) => ctx.actor),
  approvals: approvalsRouter,
  responses: responsesRouter,
});

export type AppRouter = typeof appRouter;
