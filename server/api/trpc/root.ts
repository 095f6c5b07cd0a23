import { authenticatedProcedure, publicProcedure, router } from "./init";
import { accountRouter } from "./routers/account";
import { adminRouter } from "./routers/admin";
import { analyticsRouter } from "./routers/analytics";
import { approvalsRouter } from "./routers/approvals";
import { auditRouter } from "./routers/audit";
import { consoleRouter } from "./routers/console";
import { devicesRouter } from "./routers/devices";
import { grantsRouter } from "./routers/grants";
import { inboxRouter } from "./routers/inbox";
import { linkRouter } from "./routers/link";
import { notificationsRouter } from "./routers/notifications";
import { policyRouter } from "./routers/policy";
import { questionRouter } from "./routers/question";
import { responsesRouter } from "./routers/responses";
import { sessionsRouter } from "./routers/sessions";
import { settingsRouter } from "./routers/settings";
import { usersRouter } from "./routers/users";

export const appRouter = router({
  me: authenticatedProcedure.query(({ ctx }) => ctx.actor),
  /** What the login page offers, for anyone: "Sign in with <name>" when single sign-on is configured, and the password form unless it is off. */
  signInMethods: publicProcedure.query(({ ctx }) => ({ sso: ctx.deps.signIn?.sso ? { name: ctx.deps.signIn.sso.name } : null, password: ctx.deps.signIn?.passwordLogin ?? true })),
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
  analytics: analyticsRouter,
  policy: policyRouter,
});

export type AppRouter = typeof appRouter;
