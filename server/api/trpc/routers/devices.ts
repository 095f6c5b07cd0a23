import { z } from "zod";
import { ZDeviceName } from "../../../devices/protocol";
import { createPairing, listDevices, listDevicesPage, revokeDevice, type TDeviceRow } from "../../../devices/store";
import type { TDeps } from "../../../host/deps";
import { authenticatedProcedure, router } from "../init";
import { ZPageOnly } from "./page-input";

/** A device as the console shows it: pairing expiry resolved, online from this process's hub. */
function deviceViews(deps: Pick<TDeps, "devices" | "now">, rows: TDeviceRow[]) {
  const hub = deps.devices;
  const now = deps.now().getTime();
  return rows.map((d) => ({
    id: d.id,
    name: d.name,
    status: d.status === "pending" && d.pairingExpiresAt.getTime() <= now ? ("expired" as const) : d.status,
    online: d.status === "paired" && (hub?.isOnline(d.id) ?? false),
    commands: d.commands,
    consent: d.policy?.consent ?? null,
    denyPatterns: d.policy?.denyPatterns ?? null,
    createdBy: d.createdBy,
    createdAt: d.createdAt.toISOString(),
    pairingExpiresAt: d.pairingExpiresAt.toISOString(),
    pairedAt: d.pairedAt?.toISOString() ?? null,
    lastSeenAt: d.lastSeenAt?.toISOString() ?? null,
    revokedAt: d.revokedAt?.toISOString() ?? null,
  }));
}

/** Paired devices: one-time pairing tokens (admin), the list, and revocation (admin). */
export const devicesRouter = router({
  /** A one-time pairing token for a new device (returned once; stored hashed; 10 minutes). */
  createPairing: authenticatedProcedure
    .input(z.strictObject({ name: ZDeviceName }))
    .mutation(async ({ ctx, input }) => {
      const created = await createPairing(ctx.deps.db, ctx.actor, ctx.who.origin, { name: input.name, now: ctx.deps.now() });
      ctx.deps.log.info({ deviceId: created.deviceId, name: created.name, by: ctx.actor.userId }, "device pairing created");
      return created;
    }),
  list: authenticatedProcedure.query(async ({ ctx }) => deviceViews(ctx.deps, await listDevices(ctx.deps.db, ctx.actor))),
  /** One page of devices, newest first, and the cursor of the next (older) page (workspace readers). */
  page: authenticatedProcedure.input(ZPageOnly).query(async ({ ctx, input }) => {
    const page = await listDevicesPage(ctx.deps.db, ctx.actor, input);
    return { rows: deviceViews(ctx.deps, page.rows), nextCursor: page.nextCursor };
  }),
  /** Revokes a device: its credential stops working, it is disconnected, its commands are refused. */
  revoke: authenticatedProcedure.input(z.strictObject({ deviceId: z.string().min(1).max(200) })).mutation(async ({ ctx, input }) => {
    const row = await revokeDevice(ctx.deps.db, ctx.actor, ctx.who.origin, input.deviceId, ctx.deps.now());
    ctx.deps.devices.disconnect(row.id, "This device's pairing was revoked by an admin.");
    ctx.deps.log.info({ deviceId: row.id, by: ctx.actor.userId }, "device revoked");
    return { deviceId: row.id, name: row.name, status: row.status, revokedAt: row.revokedAt?.toISOString() ?? null };
  }),
});
