import type { Db } from "../../db/client";
import { apiKeyStanding, loginSessionStanding } from "../../db/repositories/credentials";
import { DomainError, refused } from "../core/errors";
import type { TCredential } from "../core/credential";
import type { TRole } from "../core/vocabulary";

export type { TCredential };

/**
 * The safety net behind the bus: every open connection (and every watched run source) re-checks
 * its credential this often even when no change was announced (a NOTIFY lost while PostgreSQL
 * restarted, a replica that died between its commit and its NOTIFY).
 */
export const CREDENTIAL_RECHECK_MS = 30_000;

/** A stable key of one credential (several connections may share it). */
export const credentialKey = (credential: TCredential): string => (credential.via === "api_key" ? `key:${credential.keyId}` : `session:${credential.sessionId}`);

type TRow = { revoked: boolean; role: TRole; disabledAt: Date | null; deletedAt: Date | null };

async function currentRow(db: Db, credential: TCredential, now: Date): Promise<TRow | null> {
  if (credential.via === "api_key") {
    const row = await apiKeyStanding(db, credential.keyId);
    return row && row.userId === credential.userId ? { ...row, revoked: row.revokedAt !== null } : null;
  }
  const row = await loginSessionStanding(db, credential.sessionId);
  return row && row.userId === credential.userId ? { ...row, revoked: row.expiresAt <= now } : null;
}

/**
 * Does a connection's credential still hold? Null when it does; otherwise the refusal: `unauthenticated`
 * when the credential is gone (key revoked, signed out or expired, user disabled or deleted),
 * `forbidden` when the user's role changed, so the authority the connection was admitted with no
 * longer holds (the client reconnects with its new rights). One indexed query.
 */
export async function credentialRefusal(db: Db, credential: TCredential, now = new Date()): Promise<DomainError | null> {
  const row = await currentRow(db, credential, now);
  const gone = (why: string) => new DomainError("unauthenticated", why);
  if (!row) return gone(credential.via === "api_key" ? "The API key no longer exists." : "The console session ended (signed out or expired).");
  if (row.deletedAt) return gone("The user was deleted.");
  if (row.disabledAt) return gone("The user was disabled.");
  if (row.revoked) return gone(credential.via === "api_key" ? "The API key was revoked." : "The console session ended (signed out or expired).");
  if (row.role !== credential.role) return refused("forbidden", { code: "roleChanged", params: { from: credential.role, to: row.role } });
  return null;
}
