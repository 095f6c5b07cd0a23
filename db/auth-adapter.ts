import { drizzleAdapter } from "better-auth/adapters/drizzle";
import type { Db } from "./client";
import { accounts, loginSessions, users, verifications } from "./schema";

/**
 * better-auth's database: its drizzle adapter on Countersign's own tables (users, login_sessions,
 * accounts, verifications), under the model names server/auth/auth.ts configures.
 */
export function betterAuthDatabase(db: Db) {
  return drizzleAdapter(db, {
    provider: "pg",
    schema: { users, login_sessions: loginSessions, accounts, verifications },
  });
}
