import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { signInFailures } from "../../db/schema";

/**
 * Per-account backoff for console password sign-ins, in the database so every replica counts the
 * same attempts. Keyed on the lower-cased email whether or not such an account exists, so the
 * answer never tells an attacker which emails are accounts.
 */

/** Attempts that may fail in a row before the account waits. */
export const FREE_FAILURES = 5;
/** The first wait, doubled for each further failure… */
export const FIRST_WAIT_SECONDS = 5;
/** …up to this. */
export const MAX_WAIT_SECONDS = 15 * 60;
/** Failures older than this are forgotten (and their rows pruned). */
const FORGET_AFTER_MS = 24 * 3_600_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/** The account an email names: trimmed and lower-cased (better-auth compares emails the same way). */
export const accountOf = (email: string): string => email.trim().toLowerCase();

export type TReservation = { ok: true } | { ok: false; retryAfter: number };

let lastPrune = 0;

/**
 * Counts a sign-in attempt for `account` before the password is checked, unless the account is
 * waiting. Counting first (one atomic upsert) means concurrent guesses cannot all slip in before
 * the first failure is recorded; a successful sign-in then clears the count.
 */
export async function reserveSignInAttempt(db: Db, account: string, now: Date): Promise<TReservation> {
  if (now.getTime() - lastPrune > PRUNE_EVERY_MS) {
    lastPrune = now.getTime();
    await forgetOldFailures(db, now);
  }
  const at = sql`${now.toISOString()}::timestamptz`;
  const forgetBefore = sql`${new Date(now.getTime() - FORGET_AFTER_MS).toISOString()}::timestamptz`;
  const count = sql`(case when ${signInFailures.lastFailureAt} < ${forgetBefore} then 1 else ${signInFailures.failures} + 1 end)`;
  // After the FREE_FAILURES-th attempt in a row: FIRST_WAIT_SECONDS · 2^(attempts − FREE_FAILURES), at
  // most MAX_WAIT_SECONDS, set by the same statement that counts the attempt.
  const wait = sql`least(${MAX_WAIT_SECONDS}, ${FIRST_WAIT_SECONDS} * power(2, least(${count} - ${FREE_FAILURES}, 20)))`;
  const [counted] = await db
    .insert(signInFailures)
    .values({ account, failures: 1, lastFailureAt: now, blockedUntil: null })
    .onConflictDoUpdate({
      target: signInFailures.account,
      set: {
        failures: count,
        lastFailureAt: now,
        blockedUntil: sql`case when ${count} >= ${FREE_FAILURES} then ${at} + make_interval(secs => ${wait}) end`,
      },
      setWhere: or(isNull(signInFailures.blockedUntil), sql`${signInFailures.blockedUntil} <= ${at}`),
    })
    .returning({ failures: signInFailures.failures });
  if (counted) return { ok: true };
  const [row] = await db.select({ blockedUntil: signInFailures.blockedUntil }).from(signInFailures).where(eq(signInFailures.account, account));
  const left = (row?.blockedUntil?.getTime() ?? now.getTime()) - now.getTime();
  return { ok: false, retryAfter: Math.max(1, Math.ceil(left / 1000)) };
}

/** A successful sign-in: the account starts afresh. */
export async function clearSignInFailures(db: Db, account: string): Promise<void> {
  await db.delete(signInFailures).where(eq(signInFailures.account, account));
}

/** Drops rows of accounts that have not failed for a day and are not waiting (made-up emails add up). */
async function forgetOldFailures(db: Db, now: Date): Promise<void> {
  const before = new Date(now.getTime() - FORGET_AFTER_MS);
  await db.delete(signInFailures).where(and(lt(signInFailures.lastFailureAt, before), or(isNull(signInFailures.blockedUntil), lt(signInFailures.blockedUntil, now))));
}
