import { z } from "zod";
import { NOTIFICATION_STATUSES } from "../../../core/vocabulary";
import { notificationAttempts, notificationChannels, notificationsPage } from "../../../services/read/console";
import { router } from "../init";
import { workspaceReaderProcedure } from "./console-procedures";

const ZId = z.string().min(1).max(200);

/** The notification delivery log (admins, operators, auditors): deliveries and their attempts. */
export const notificationsRouter = router({
  list: workspaceReaderProcedure
    .input(
      z.strictObject({
        status: z.enum(NOTIFICATION_STATUSES).optional(),
        channel: z.string().min(1).max(64).optional(),
        subjectId: ZId.optional(),
        cursor: z.string().max(400).nullish(),
        limit: z.number().int().min(1).max(200).default(50),
        /** Sent by tRPC's infinite queries; the log pages forward only. */
        direction: z.enum(["forward", "backward"]).optional(),
      }),
    )
    .query(({ ctx, input }) => notificationsPage(ctx.deps, input)),
  attempts: workspaceReaderProcedure.input(z.strictObject({ notificationId: ZId })).query(({ ctx, input }) => notificationAttempts(ctx.deps, input.notificationId)),
  channels: workspaceReaderProcedure.query(({ ctx }) => notificationChannels(ctx.deps)),
});
