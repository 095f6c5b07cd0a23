import { eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { userSettings } from "../../../db/schema";
import type { TLocale } from "../../core/vocabulary";

/** A user's console preferences; `locale: null` follows the browser's language. */
export type TUserSettings = { locale: TLocale | null };

/** The settings of `userId` (defaults when the user never chose anything). */
export async function getUserSettings(db: Db, userId: string): Promise<TUserSettings> {
  const [row] = await db.select({ locale: userSettings.locale }).from(userSettings).where(eq(userSettings.userId, userId));
  return { locale: row?.locale ?? null };
}

/** Sets the console language of `userId` (null: follow the browser again). */
export async function setUserLocale(db: Db, userId: string, locale: TLocale | null): Promise<TUserSettings> {
  await db
    .insert(userSettings)
    .values({ userId, locale })
    .onConflictDoUpdate({ target: userSettings.userId, set: { locale, updatedAt: new Date() } });
  return { locale };
}
