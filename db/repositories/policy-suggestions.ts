import { eq } from "drizzle-orm";
import type { Db } from "../client";
import { policySuggestionDismissals } from "../schema";

/** The changes dismissed for a window of this length. */
export async function dismissedChanges(db: Db, windowDays: number): Promise<Set<string>> {
  const rows = await db.select({ key: policySuggestionDismissals.changeKey }).from(policySuggestionDismissals).where(eq(policySuggestionDismissals.windowDays, windowDays));
  return new Set(rows.map((r) => r.key));
}

/** Dismisses a change for a window of this length; false when it already was. */
export async function dismissChange(db: Db, row: { changeKey: string; windowDays: number; dismissedBy: string }): Promise<boolean> {
  const inserted = await db.insert(policySuggestionDismissals).values(row).onConflictDoNothing().returning({ key: policySuggestionDismissals.changeKey });
  return inserted.length > 0;
}
