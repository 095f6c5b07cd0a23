import { createHash } from "node:crypto";
import type { Db } from "../../db/client";
import { recordAdminEvent } from "../../db/repositories/audit";
import {
  deviceById,
  deviceByPairingTokenHash,
  devicesAfter,
  devicesNamed,
  insertPendingDevice,
  pairPendingDevice,
  recordDeviceConnection,
  revokeExpiredPairingNamed,
  revokeLiveDevice,
  type TDeviceRow,
} from "../../db/repositories/devices";
import { decodeCursor, type TPage, toPage } from "../../db/repositories/keyset";
import type { TActor } from "../core/actor";
import type { TAdminOrigin } from "../core/admin-trail";
import { notFound, refused } from "../core/errors";
import type { TAdminAct } from "../core/error-reasons";
import { newId, newSecret } from "../core/ids";
import { READ_ALL_ROLES } from "../core/vocabulary";
import type { TDeviceHello } from "./protocol";

export type { TDeviceRow };

/** How long a pairing token can be used. */
export const PAIRING_TTL_MS = 10 * 60_000;

const TOKEN_PREFIX = "cspair_";
const CREDENTIAL_PREFIX = "csdev_";

/** SHA-256 is enough: tokens and credentials are 256-bit random secrets. */
export const hashSecret = (secret: string): string => createHash("sha256").update(secret).digest("hex");

export const requireAdmin = (actor: TActor, act: TAdminAct): void => {
  if (actor.role !== "admin") throw refused("forbidden", { code: "adminOnly", params: { act } });
};

const isUniqueViolation = (error: unknown): boolean => {
  const e = error as { code?: unknown; cause?: { code?: unknown } };
  return e?.code === "23505" || e?.cause?.code === "23505";
};

/** Creates a pending device with a one-time pairing token (returned once; stored hashed; 10 minutes). */
export async function createPairing(
  db: Db,
  actor: TActor,
  origin: TAdminOrigin,
  input: { name: string; now: Date },
): Promise<{ deviceId: string; name: string; token: string; expiresAt: string }> {
  requireAdmin(actor, "pairDevices");
  const token = `${TOKEN_PREFIX}${newSecret(32)}`;
  const id = newId("dev");
  const expiresAt = new Date(input.now.getTime() + PAIRING_TTL_MS);
  try {
    await db.transaction(async (transaction) => {
      const tx = transaction as unknown as Db;
      // An unused pairing that expired no longer holds its name.
      await revokeExpiredPairingNamed(tx, input.name, input.now);
      await insertPendingDevice(tx, { id, name: input.name, createdBy: actor.userId, pairingTokenHash: hashSecret(token), pairingExpiresAt: expiresAt });
      await recordAdminEvent(tx, { actor, origin }, { action: "device.pairing_created", targetType: "device", targetId: id, detail: { name: input.name, expiresAt: expiresAt.toISOString() } });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw refused("conflict", { code: "deviceNameTaken", params: { name: input.name } });
    throw error;
  }
  return { deviceId: id, name: input.name, token, expiresAt: expiresAt.toISOString() };
}

export type TAuthFailure = { ok: false; code: "pairing_failed" | "auth_failed" | "revoked"; message: string };

/** Uses a pairing token once: the device becomes `paired` and gets its credential (returned once, stored hashed). */
export async function pairWithToken(
  db: Db,
  hello: Extract<TDeviceHello, { type: "pair" }>,
  now: Date,
): Promise<{ ok: true; device: TDeviceRow; credential: string } | TAuthFailure> {
  const tokenHash = hashSecret(hello.token);
  const credential = `${CREDENTIAL_PREFIX}${newSecret(32)}`;
  const device = await pairPendingDevice(db, tokenHash, hashSecret(credential), { commands: hello.commands, policy: { consent: hello.consent, denyPatterns: hello.denyPatterns } }, now);
  if (device) return { ok: true, device, credential };
  // Zero rows: say why, without revealing anything about other devices.
  const row = await deviceByPairingTokenHash(db, tokenHash);
  if (!row) return { ok: false, code: "pairing_failed", message: "This pairing token is not valid; ask an admin for a new one." };
  if (row.status === "revoked") return { ok: false, code: "pairing_failed", message: "This pairing was revoked; ask an admin for a new token." };
  if (row.status === "paired") return { ok: false, code: "pairing_failed", message: "This pairing token was already used; a token pairs one device once." };
  return { ok: false, code: "pairing_failed", message: "This pairing token has expired (tokens last 10 minutes); ask an admin for a new one." };
}

/** Checks a reconnecting device's credential; records what it declared. */
export async function authenticateDevice(db: Db, hello: Extract<TDeviceHello, { type: "hello" }>, now: Date): Promise<{ ok: true; device: TDeviceRow } | TAuthFailure> {
  const row = await deviceById(db, hello.deviceId);
  if (!row?.credentialHash || row.credentialHash !== hashSecret(hello.credential)) {
    return { ok: false, code: "auth_failed", message: "Unknown device or wrong credential; pair this device again with a new token." };
  }
  if (row.status === "revoked") return { ok: false, code: "revoked", message: "This device's pairing was revoked by an admin; it can no longer run commands." };
  const device = await recordDeviceConnection(db, row.id, { commands: hello.commands, policy: { consent: hello.consent, denyPatterns: hello.denyPatterns } }, now);
  if (!device) return { ok: false, code: "revoked", message: "This device's pairing was revoked by an admin; it can no longer run commands." };
  return { ok: true, device };
}

/** Revokes a device (pending or paired), with its trail row; its credential stops working at once. */
export async function revokeDevice(db: Db, actor: TActor, origin: TAdminOrigin, deviceId: string, now: Date): Promise<TDeviceRow> {
  requireAdmin(actor, "revokeDevices");
  const row = await db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const revoked = await revokeLiveDevice(tx, deviceId, actor.userId, now);
    if (revoked) await recordAdminEvent(tx, { actor, origin }, { action: "device.revoked", targetType: "device", targetId: revoked.id, detail: { name: revoked.name, was: revoked.pairedAt ? "paired" : "pending" } });
    return revoked;
  });
  if (row) return row;
  const existing = await deviceById(db, deviceId);
  if (!existing) throw notFound("device", deviceId);
  throw refused("conflict", { code: "deviceRevoked", params: { name: existing.name } });
}

/** Every device, newest first (admins, operators and auditors). */
export async function listDevices(db: Db, actor: TActor): Promise<TDeviceRow[]> {
  return (await listDevicesPage(db, actor, { limit: 500 })).rows;
}

/** One page of devices, newest first (workspace readers only). */
export async function listDevicesPage(db: Db, actor: TActor, page: { cursor?: string | null; limit: number }): Promise<TPage<TDeviceRow>> {
  if (!READ_ALL_ROLES.includes(actor.role)) throw refused("forbidden", { code: "roleCannot", params: { act: "seeDevices" } });
  const cursor = decodeCursor(page.cursor);
  const rows = await devicesAfter(db, cursor, page.limit + 1);
  const shown = toPage(
    rows.map((r) => ({ id: r.row.id, cursorAt: r.cursorAt, row: r.row })),
    page.limit,
  );
  return { rows: shown.rows.map((r) => r.row), nextCursor: shown.nextCursor };
}

/** A device by id, else by name (the live one with that name, else the latest revoked one). */
export async function findDevice(db: Db, ref: string): Promise<TDeviceRow | null> {
  const byId = await deviceById(db, ref);
  if (byId) return byId;
  const byName = await devicesNamed(db, ref);
  return byName.find((d) => d.status !== "revoked") ?? byName[0] ?? null;
}

/** The current row of a device (re-read right before a command is sent). */
export { deviceById };
