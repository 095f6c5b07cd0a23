import { and, desc, eq, gt, lte, ne } from "drizzle-orm";
import type { Db } from "../client";
import { agentSessions, devices } from "../schema";
import { beforeCursor, exactTimestamp, type TKeysetCursor } from "./keyset";

export type TDeviceRow = typeof devices.$inferSelect;

/** What a device declares each time it connects: its allowlisted commands and its local policy. */
export type TDeviceDeclaration = Pick<typeof devices.$inferInsert, "commands" | "policy">;

/** Revokes (as `system`) the unused pending pairing named `name` whose token expired by `now`: it no longer holds the name. */
export async function revokeExpiredPairingNamed(tx: Db, name: string, now: Date): Promise<void> {
  await tx
    .update(devices)
    .set({ status: "revoked", revokedAt: now, revokedBy: "system" })
    .where(and(eq(devices.name, name), eq(devices.status, "pending"), lte(devices.pairingExpiresAt, now)));
}

/** Inserts a pending device with its pairing token's hash and expiry. */
export async function insertPendingDevice(tx: Db, device: { id: string; name: string; createdBy: string; pairingTokenHash: string; pairingExpiresAt: Date }): Promise<void> {
  await tx.insert(devices).values({ id: device.id, name: device.name, createdBy: device.createdBy, pairingTokenHash: device.pairingTokenHash, pairingExpiresAt: device.pairingExpiresAt });
}

/**
 * Pairs the pending device whose unexpired pairing token has this hash: `paired`, with its
 * credential's hash and what it declared; null when no device matched (one conditional update).
 */
export async function pairPendingDevice(db: Db, tokenHash: string, credentialHash: string, declared: TDeviceDeclaration, now: Date): Promise<TDeviceRow | null> {
  const [device] = await db
    .update(devices)
    .set({ status: "paired", pairedAt: now, credentialHash, lastSeenAt: now, commands: declared.commands, policy: declared.policy })
    .where(and(eq(devices.pairingTokenHash, tokenHash), eq(devices.status, "pending"), gt(devices.pairingExpiresAt, now)))
    .returning();
  return device ?? null;
}

/** The device whose pairing token has this hash, in any state. */
export async function deviceByPairingTokenHash(db: Db, tokenHash: string): Promise<TDeviceRow | null> {
  const [row] = await db.select().from(devices).where(eq(devices.pairingTokenHash, tokenHash));
  return row ?? null;
}

/** The current row of a device. */
export async function deviceById(db: Db, id: string): Promise<TDeviceRow | null> {
  const [row] = await db.select().from(devices).where(eq(devices.id, id));
  return row ?? null;
}

/** Records a paired device's connection (last seen, what it declared); null when it is not paired any more. */
export async function recordDeviceConnection(db: Db, deviceId: string, declared: TDeviceDeclaration, now: Date): Promise<TDeviceRow | null> {
  const [device] = await db
    .update(devices)
    .set({ lastSeenAt: now, commands: declared.commands, policy: declared.policy })
    .where(and(eq(devices.id, deviceId), eq(devices.status, "paired")))
    .returning();
  return device ?? null;
}

/** Revokes a device that is not revoked yet, by `revokedBy`; null when there was none to revoke. */
export async function revokeLiveDevice(tx: Db, deviceId: string, revokedBy: string, now: Date): Promise<TDeviceRow | null> {
  const [revoked] = await tx
    .update(devices)
    .set({ status: "revoked", revokedAt: now, revokedBy })
    .where(and(eq(devices.id, deviceId), ne(devices.status, "revoked")))
    .returning();
  return revoked ?? null;
}

/** Up to `limit` devices after the cursor, newest first (keyset on created_at, id), each with its exact cursor time. */
export async function devicesAfter(db: Db, cursor: TKeysetCursor | null, limit: number): Promise<Array<{ row: TDeviceRow; cursorAt: string }>> {
  return db
    .select({ row: devices, cursorAt: exactTimestamp(devices.createdAt) })
    .from(devices)
    .where(cursor ? beforeCursor(devices.createdAt, devices.id, cursor) : undefined)
    .orderBy(desc(devices.createdAt), desc(devices.id))
    .limit(limit);
}

/** The latest 20 devices with this name, newest first (revoked ones too). */
export async function devicesNamed(db: Db, name: string): Promise<TDeviceRow[]> {
  return db.select().from(devices).where(eq(devices.name, name)).orderBy(desc(devices.createdAt)).limit(20);
}

type TAgentSessionAccess = (typeof agentSessions.$inferSelect)["access"];

/** The access level of an agent session (`full` lets declared node commands run without a prompt); null for an unknown session. */
export async function agentSessionAccess(db: Db, sessionId: string): Promise<TAgentSessionAccess | null> {
  const [session] = await db.select({ access: agentSessions.access }).from(agentSessions).where(eq(agentSessions.id, sessionId));
  return session?.access ?? null;
}
