import type { Db } from "../../db/client";
import { clearSignInFailureRow, countSignInAttempt, deleteStaleSignInFailures, signInBlockedUntil } from "../../db/repositories/sign-in";

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
const BACKOFF = { freeFailures: FREE_FAILURES, firstWaitSeconds: FIRST_WAIT_SECONDS, maxWaitSeconds: MAX_WAIT_SECONDS, forgetAfterMs: FORGET_AFTER_MS };

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
  // After the FREE_FAILURES-th attempt in a row: FIRST_WAIT_SECONDS · 2^(attempts − FREE_FAILURES), at
  // most MAX_WAIT_SECONDS, set by the same statement that counts the attempt.
  if (await countSignInAttempt(db, account, now, BACKOFF)) return { ok: true };
  const blockedUntil = await signInBlockedUntil(db, account);
  const left = (blockedUntil?.getTime() ?? now.getTime()) - now.getTime();
  return { ok: false, retryAfter: Math.max(1, Math.ceil(left / 1000)) };
}

/** A successful sign-in: the account starts afresh. */
export async function clearSignInFailures(db: Db, account: string): Promise<void> {
  await clearSignInFailureRow(db, account);
}

/** Drops rows of accounts that have not failed for a day and are not waiting (made-up emails add up). */
async function forgetOldFailures(db: Db, now: Date): Promise<void> {
  const before = new Date(now.getTime() - FORGET_AFTER_MS);
  await deleteStaleSignInFailures(db, before, now);
}
