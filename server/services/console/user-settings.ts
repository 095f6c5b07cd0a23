import type { Db } from "../../../db/client";
import { storedLocale, upsertLocale } from "../../../db/repositories/user-settings";
import type { TLocale } from "../../core/vocabulary";

/** A user's console preferences; `locale: null` follows the browser's language. */
export type TUserSettings = { locale: TLocale | null };

/** The settings of `userId` (defaults when the user never chose anything). */
export async function getUserSettings(db: Db, userId: string): Promise<TUserSettings> {
  return { locale: await storedLocale(db, userId) };
}

/** Sets the console language of `userId` (null: follow the browser again). */
export async function setUserLocale(db: Db, userId: string, locale: TLocale | null): Promise<TUserSettings> {
  await upsertLocale(db, userId, locale);
  return { locale };
}
