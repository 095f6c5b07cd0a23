import { approvalsRouter } from "./routers/approvals";
import { devicesRouter } from "./routers/devices";
import { sessionsRouter } from "./routers/sessions";
import { questionRouter } from "./routers/question";
import { responsesRouter } from "./routers/responses";
import { usersRouter } from "./routers/users";
import { consoleRouter } from "./routers/console";
import { inboxRouter } from "./routers/inbox";
import { auditRouter } from "./routers/audit";
import { adminRouter } from "./routers/admin";
import { grantsRouter } from "./routers/grants";
import { linkRouter } from "./routers/link";
import { notificationsRouter } from "./routers/notifications";
import { authenticatedProcedure, router } from "./init";

export const appRouter = router({
  me: authenticatedProcedure.query(({ ctx }) => ctx.actor),
  approvals: approvalsRouter,
  responses: responsesRouter,
  users: usersRouter,
  question: questionRouter,
  devices: devicesRouter,
  sessions: sessionsRouter,
  console: consoleRouter,
  inbox: inboxRouter,
  audit: auditRouter,
  admin: adminRouter,
  notifications: notificationsRouter,
  link: linkRouter,
  grants: grantsRouter,
});

export type AppRouter = typeof appRouter;
