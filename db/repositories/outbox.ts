import { inArray } from "drizzle-orm";
import type { Db } from "../client";
import { notificationPlans } from "../schema";

type TPlanRow = typeof notificationPlans.$inferInsert;

/**
 * Claims the plan row of one fact (subject, event) with `on conflict do nothing`: true for the one
 * claim that inserted it, false when another path or replica planned that fact already.
 */
export async function claimNotificationPlan(
  tx: Db,
  plan: { subjectId: string; event: TPlanRow["event"]; subjectKind: TPlanRow["subjectKind"]; deliveries: number; createdAt: Date },
): Promise<boolean> {
  const [won] = await tx
    .insert(notificationPlans)
    .values({ subjectId: plan.subjectId, event: plan.event, subjectKind: plan.subjectKind, deliveries: plan.deliveries, createdAt: plan.createdAt })
    .onConflictDoNothing()
    .returning();
  return won !== undefined;
}

/** The events already planned for each of `subjectIds`. */
export async function plannedEvents(db: Db, subjectIds: string[]): Promise<Array<{ subjectId: string; event: TPlanRow["event"] }>> {
  return db
    .select({ subjectId: notificationPlans.subjectId, event: notificationPlans.event })
    .from(notificationPlans)
    .where(inArray(notificationPlans.subjectId, subjectIds));
}
