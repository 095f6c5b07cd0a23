import { pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { LOCALES } from "../../server/core/vocabulary";
import { users } from "./auth";

export const localeEnum = pgEnum("locale", LOCALES);

/** A console user's own preferences; no row (or a null column) means "follow the browser". */
export const userSettings = pgTable("user_settings", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  /** The console's language; null: the browser's. */
  locale: localeEnum("locale"),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
