import { and, eq, gt, isNull } from "drizzle-orm";
import type { Db } from "../client";
import { linkTokens } from "../schema";

/** A single-use link token (only its SHA-256 is stored). */
export type TLinkToken = typeof linkTokens.$inferSelect;

/** Stores a new link token by its hash. */
export async function insertLinkToken(
  db: Db,
  token: Pick<TLinkToken, "id" | "tokenHash" | "subjectKind" | "subjectId" | "userId" | "notificationId" | "expiresAt" | "createdAt">,
): Promise<void> {
  await db.insert(linkTokens).values({
    id: token.id,
    tokenHash: token.tokenHash,
    subjectKind: token.subjectKind,
    subjectId: token.subjectId,
    userId: token.userId,
    notificationId: token.notificationId,
    expiresAt: token.expiresAt,
    createdAt: token.createdAt,
  });
}

/** Marks every unused token minted for a notification as used at `now`. */
export async function markNotificationLinkTokensUsed(db: Db, notificationId: string, now: Date): Promise<void> {
  await db.update(linkTokens).set({ usedAt: now }).where(and(eq(linkTokens.notificationId, notificationId), isNull(linkTokens.usedAt)));
}

/** The token with this hash, used or not, or null. */
export async function linkTokenByHash(db: Db, tokenHash: string): Promise<TLinkToken | null> {
  const [row] = await db.select().from(linkTokens).where(eq(linkTokens.tokenHash, tokenHash));
  return row ?? null;
}

/** Uses a token up if it is still unused and unexpired at `now` (one conditional update); null when another use won. */
export async function markLinkTokenUsed(db: Db, id: string, now: Date): Promise<TLinkToken | null> {
  const [won] = await db
    .update(linkTokens)
    .set({ usedAt: now })
    .where(and(eq(linkTokens.id, id), isNull(linkTokens.usedAt), gt(linkTokens.expiresAt, now)))
    .returning();
  return won ?? null;
}

/** Makes a token usable again, if it is still the use made at `usedAt`. */
export async function restoreLinkToken(db: Db, id: string, usedAt: Date): Promise<void> {
  await db.update(linkTokens).set({ usedAt: null }).where(and(eq(linkTokens.id, id), eq(linkTokens.usedAt, usedAt)));
}
