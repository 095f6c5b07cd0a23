import { authenticatedProcedure, router } from "./init";
import { accountRouter } from "./routers/account";
import { adminRouter } from "./routers/admin";
import { approvalsRouter } from "./routers/approvals";
import { auditRouter } from "./routers/audit";
import { consoleRouter } from "./routers/console";
import { devicesRouter } from "./routers/devices";
import { grantsRouter } from "./routers/grants";
import { inboxRouter } from "./routers/inbox";
import { linkRouter } from "./routers/link";
import { notificationsRouter } from "./routers/notifications";
import { questionRouter } from "./routers/question";
import { responsesRouter } from "./routers/responses";
import { sessionsRouter } from "./routers/sessions";
import { settingsRouter } from "./routers/settings";
import { usersRouter } from "./routers/users";

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
  settings: settingsRouter,
  account: accountRouter,
});

export type AppRouter = typeof appRouter;
