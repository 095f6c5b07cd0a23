import { approvalsRouter } from "./routers/approvals";
import { questionRouter } from "./routers/question";
import { responsesRouter } from "./routers/responses";
import { usersRouter } from "./routers/users";
import { authenticatedProcedure, router } from "./init";

export const appRouter = router({
  me: authenticatedProcedure.query(({ ctx }) => ctx.actor),
  approvals: approvalsRouter,
  responses: responsesRouter,
  users: usersRouter,
  question: questionRouter,
});

export type AppRouter = typeof appRouter;
