import { z } from "zod";
import type { Db } from "../../db/client";
import { responseIdOfApproval } from "../../db/repositories/approvals";
import { recordAdminEvent } from "../../db/repositories/audit";
import { grantById, grantsPage, revokeActiveGrant, type TGrantRow } from "../../db/repositories/grants";
import { decodeCursor, type TPage, toPage } from "../../db/repositories/keyset";
import { GRANT_SCOPES } from "../../db/schema/grants";
import { canDecide, canRead, type TActor } from "../core/actor";
import type { TAdminWho } from "../core/admin-trail";
import { notFound, refused } from "../core/errors";
import { readScope, type TReadScope } from "../core/read-scope";
import { TRANSPORTS } from "../core/vocabulary";
import type { TDeps } from "../host/deps";
import { recordEvents } from "../host/transact";

const ZNullableTime = z.string().nullable();

/** A standing grant as the console and `/v1/grants` show it. */
export const ZGrantRecord = z.object({
  id: z.string(),
  status: z.enum(["active", "expired", "revoked"]),
  userId: z.string(),
  user: z.string().nullable(),
  /** The owner's email, shown beside the name. */
  userEmail: z.string().nullable(),
  agent: z.string(),
  toolName: z.string(),
  action: z.string(),
  arguments: z.unknown(),
  cwd: z.string().nullable(),
  scope: z.enum(GRANT_SCOPES),
  sessionId: z.string().nullable(),
  expiresAt: ZNullableTime,
  approvalId: z.string(),
  createdBy: z.string(),
  createdVia: z.enum(TRANSPORTS),
  createdAt: z.string(),
  uses: z.number().int(),
  lastUsedAt: ZNullableTime,
  revokedAt: ZNullableTime,
  revokedBy: z.string().nullable(),
});
export type TGrantRecord = z.infer<typeof ZGrantRecord>;

export function grantRecord(g: TGrantRow, now: Date, owner: { name: string | null; email: string | null } = { name: null, email: null }): TGrantRecord {
  const status: TGrantRecord["status"] = g.revokedAt ? "revoked" : g.expiresAt && g.expiresAt.getTime() <= now.getTime() ? "expired" : "active";
  return {
    id: g.id,
    status,
    userId: g.userId,
    user: owner.name,
    userEmail: owner.email,
    agent: g.agent,
    toolName: g.toolName,
    action: g.action,
    arguments: g.arguments,
    cwd: g.cwd,
    scope: g.scope,
    sessionId: g.sessionId,
    expiresAt: g.expiresAt?.toISOString() ?? null,
    approvalId: g.approvalId,
    createdBy: g.createdBy,
    createdVia: g.createdVia,
    createdAt: g.createdAt.toISOString(),
    uses: g.uses,
    lastUsedAt: g.lastUsedAt?.toISOString() ?? null,
    revokedAt: g.revokedAt?.toISOString() ?? null,
    revokedBy: g.revokedBy,
  };
}

/**
 * One page of the grants the scope may read (its own; every user's for operators, admins and
 * auditors), newest first; `active` keeps those neither revoked nor expired.
 */
export async function listGrantsPage(
  deps: Pick<TDeps, "db" | "now">,
  scope: Pick<TReadScope, "userId">,
  options: { status?: "active" | "all"; cursor?: string | null; limit: number },
): Promise<TPage<TGrantRecord>> {
  const now = deps.now();
  const activeAt = (options.status ?? "active") === "active" ? now : null;
  const rows = await grantsPage(deps.db, { userId: scope.userId, activeAt, cursor: decodeCursor(options.cursor), limit: options.limit + 1 });
  const page = toPage(
    rows.map((r) => ({ id: r.grant.id, cursorAt: r.cursorAt, record: grantRecord(r.grant, now, { name: r.userName, email: r.userEmail }) })),
    options.limit,
  );
  return { rows: page.rows.map((r) => r.record), nextCursor: page.nextCursor };
}

/** Grants the actor may see, newest first (up to 500): the first page of {@link listGrantsPage}. The CLI (`null`) sees every one. */
export async function listGrants(deps: Pick<TDeps, "db" | "now">, actor: TActor | null, options: { status?: "active" | "all"; limit?: number } = {}): Promise<TGrantRecord[]> {
  return (await listGrantsPage(deps, actor ? readScope(actor) : { userId: null }, { status: options.status, limit: Math.min(options.limit ?? 200, 500) })).rows;
}

/**
 * Revokes a grant: one conditional update, so a use already in progress finishes first and every
 * later use sees the revocation. Recorded on the admin trail (same transaction) and on the trajectory
 * of the run whose approval created it. The CLI (`actor` null) revokes any grant.
 */
export async function revokeGrant(deps: Pick<TDeps, "db" | "bus" | "log" | "now">, who: TAdminWho, grantId: string): Promise<TGrantRecord> {
  const actor = who.actor;
  const grant = await grantById(deps.db, grantId);
  if (!grant || (actor && !canRead(actor, grant.userId))) throw notFound("grant", grantId);
  if (actor && !canDecide(actor, grant.userId)) throw refused("forbidden", { code: "roleCannot", params: { act: "revokeGrants" } });
  const revoked = await deps.db.transaction(async (transaction) => {
    const tx = transaction as unknown as Db;
    const row = await revokeActiveGrant(tx, grantId, deps.now(), actor?.userId ?? "cli");
    if (!row) throw refused("conflict", { code: "grantRevoked" });
    await recordAdminEvent(tx, who, { action: "grant.revoked", targetType: "grant", targetId: grantId, detail: { userId: grant.userId, agent: grant.agent, action: grant.action, uses: row.uses } });
    return row;
  });
  const originId = await responseIdOfApproval(deps.db, grant.approvalId);
  if (originId !== null) {
    await recordEvents(deps, originId, [
      { type: "grant.revoked", data: { grantId, action: grant.action, uses: revoked.uses }, frame: false, actorUserId: actor?.userId ?? null },
    ]);
  }
  deps.log.info({ grantId, by: actor?.userId ?? "cli" }, "grant revoked");
  return grantRecord(revoked, deps.now());
}
