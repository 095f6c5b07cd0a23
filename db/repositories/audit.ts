import { newId } from "../../server/core/ids";
import type { Db } from "../client";
import { auditLog } from "../schema";

/**
 * Appends one row to the admin trail (`audit_log`): who changed what about users, keys and access.
 * Pass the transaction that makes the change, so the record and the change commit together.
 */
export async function recordAudit(db: Db, entry: { actorUserId: string | null; action: string; targetType: string; targetId: string; data?: Record<string, unknown> }): Promise<void> {
  await db.insert(auditLog).values({
    id: newId("audit"),
    actorUserId: entry.actorUserId,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    data: entry.data ?? {},
  });
}
