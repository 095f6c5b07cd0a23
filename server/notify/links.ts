import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/client";
import { insertLinkToken, linkTokenByHash, markLinkTokenUsed, markNotificationLinkTokensUsed, restoreLinkToken, type TLinkToken } from "../../db/repositories/notification-links";
import { DomainError } from "../core/errors";
import { newId } from "../core/ids";
import type { TSubjectKind } from "./route";

export type { TLinkToken };

const hashOf = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

/** A link token: 32 random bytes (base64url); only its SHA-256 is stored. TTL capped by the subject's expiry. */
export async function mintLinkToken(
  db: Db,
  input: { subjectKind: TSubjectKind; subjectId: string; userId: string; notificationId: string; ttlMs: number; subjectExpiresAt: Date; now: Date },
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Math.min(input.now.getTime() + input.ttlMs, input.subjectExpiresAt.getTime()));
  await insertLinkToken(db, {
    id: newId("link"),
    tokenHash: hashOf(token),
    subjectKind: input.subjectKind,
    subjectId: input.subjectId,
    userId: input.userId,
    notificationId: input.notificationId,
    expiresAt,
    createdAt: input.now,
  });
  return { token, expiresAt };
}

/** Makes the tokens minted for a notification unusable (its send failed, so nobody has the link). */
export async function voidLinkTokens(db: Db, notificationId: string, now: Date): Promise<void> {
  await markNotificationLinkTokensUsed(db, notificationId, now);
}

const invalid = () => new DomainError("not_found", "This link is not valid. Open the console and sign in to see what is waiting.");
const used = () => new DomainError("already_submitted", "This link was already used; each link works once. Sign in to the console to see the outcome.");
const expired = () => new DomainError("expired", "This link has expired. Sign in to the console to decide or answer.");

/** The token's row, for showing what it is about; does not use it up. Unknown, used or expired tokens are errors. */
export async function peekLinkToken(db: Db, token: string, now: Date): Promise<TLinkToken> {
  const row = await linkTokenByHash(db, hashOf(token));
  if (!row) throw invalid();
  if (row.usedAt) throw used();
  if (row.expiresAt.getTime() <= now.getTime()) throw expired();
  return row;
}

/** Uses the token up: one conditional update, so of two concurrent uses exactly one wins. */
export async function consumeLinkToken(db: Db, token: string, kind: TSubjectKind, now: Date): Promise<TLinkToken> {
  const row = await peekLinkToken(db, token, now);
  if (row.subjectKind !== kind) throw new DomainError("invalid_request", `This link is for ${row.subjectKind === "approval" ? "an approval" : "a question"}.`);
  const won = await markLinkTokenUsed(db, row.id, now);
  if (!won) throw used();
  return won;
}

/** Gives a consumed token back when the action it was used for changed nothing (e.g. a transient failure). */
export async function releaseLinkToken(db: Db, row: TLinkToken): Promise<void> {
  if (!row.usedAt) return;
  await restoreLinkToken(db, row.id, row.usedAt);
}
