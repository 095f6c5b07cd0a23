import { eq } from "drizzle-orm";
import type { TLocale } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { userSettings } from "../schema";

/** The console language a user chose; null when following the browser's (or never chose). */
export async function storedLocale(db: Db, userId: string): Promise<TLocale | null> {
  const [row] = await db.select({ locale: userSettings.locale }).from(userSettings).where(eq(userSettings.userId, userId));
  return row?.locale ?? null;
}

/** Stores the console language of a user (null: follow the browser), creating the user's settings row when needed. */
export async function upsertLocale(db: Db, userId: string, locale: TLocale | null): Promise<void> {
  await db
    .insert(userSettings)
    .values({ userId, locale })
    .onConflictDoUpdate({ target: userSettings.userId, set: { locale, updatedAt: new Date() } });
}
