import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../client";
import { signInFailures } from "../schema";

/** The backoff rule a counted attempt applies (server/auth/sign-in-backoff.ts holds the numbers). */
export type TBackoffRule = { freeFailures: number; firstWaitSeconds: number; maxWaitSeconds: number; forgetAfterMs: number };

/**
 * Counts a sign-in attempt for `account` with one atomic upsert, unless the account is waiting:
 * failures older than `forgetAfterMs` start the count afresh, and from the `freeFailures`-th
 * attempt in a row the account waits firstWaitSeconds · 2^(attempts − freeFailures), at most
 * maxWaitSeconds, set by the same statement. False when the account was waiting (nothing counted).
 */
export async function countSignInAttempt(db: Db, account: string, now: Date, rule: TBackoffRule): Promise<boolean> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const forgetBefore = sql`${new Date(now.getTime() - rule.forgetAfterMs).toISOString()}::timestamptz`;
  const count = sql`(case when ${signInFailures.lastFailureAt} < ${forgetBefore} then 1 else ${signInFailures.failures} + 1 end)`;
  const wait = sql`least(${rule.maxWaitSeconds}, ${rule.firstWaitSeconds} * power(2, least(${count} - ${rule.freeFailures}, 20)))`;
  const [counted] = await db
    .insert(signInFailures)
    .values({ account, failures: 1, lastFailureAt: now, blockedUntil: null })
    .onConflictDoUpdate({
      target: signInFailures.account,
      set: {
        failures: count,
        lastFailureAt: now,
        blockedUntil: sql`case when ${count} >= ${rule.freeFailures} then ${at} + make_interval(secs => ${wait}) end`,
      },
      setWhere: or(isNull(signInFailures.blockedUntil), sql`${signInFailures.blockedUntil} <= ${at}`),
    })
    .returning({ failures: signInFailures.failures });
  return counted !== undefined;
}

/** Until when an account waits before its next sign-in attempt (null: it does not, or has no row). */
export async function signInBlockedUntil(db: Db, account: string): Promise<Date | null> {
  const [row] = await db.select({ blockedUntil: signInFailures.blockedUntil }).from(signInFailures).where(eq(signInFailures.account, account));
  return row?.blockedUntil ?? null;
}

/** Forgets an account's failed sign-ins. */
export async function clearSignInFailureRow(db: Db, account: string): Promise<void> {
  await db.delete(signInFailures).where(eq(signInFailures.account, account));
}

/** Drops the rows of accounts whose last failure is before `before` and that are not waiting at `now`. */
export async function deleteStaleSignInFailures(db: Db, before: Date, now: Date): Promise<void> {
  await db.delete(signInFailures).where(and(lt(signInFailures.lastFailureAt, before), or(isNull(signInFailures.blockedUntil), lt(signInFailures.blockedUntil, now))));
}
