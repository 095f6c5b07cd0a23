import { and, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { buildEnvelope, type TEnvelope, type TRequiredAction } from "../../server/core/envelope";
import type { TResponseStatus } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { prepared } from "../prepared";
import { type approvals, type clientToolRequests, responses } from "../schema";

export type TResponseRow = typeof responses.$inferSelect;

export async function getResponse(db: Db, responseId: string): Promise<TResponseRow | null> {
  const statement = prepared(db, "get_response", (root) =>
    root
      .select()
      .from(responses)
      .where(eq(responses.id, sql.placeholder("id")))
      .prepare("get_response"),
  );
  const [row] = statement ? await statement.execute({ id: responseId }) : await db.select().from(responses).where(eq(responses.id, responseId));
  return row ?? null;
}

export const approvalAction = (a: typeof approvals.$inferSelect): TRequiredAction => ({
  type: "human_approval",
  id: a.id,
  callId: a.responseId,
  action: a.action,
  message: a.message,
  arguments: a.arguments,
  risk: a.risk,
  expiresAt: a.expiresAt.toISOString(),
  cwd: a.cwd,
  ...(a.reviewerRationale ? { reviewer: a.reviewer, reviewerRationale: a.reviewerRationale } : {}),
  ...(a.requiredApprovals > 1 ? { requiredApprovals: a.requiredApprovals } : {}),
});

export const clientToolAction = (r: typeof clientToolRequests.$inferSelect): TRequiredAction => ({
  type: "client_tool",
  id: r.id,
  callId: r.responseId,
  name: r.name,
  arguments: r.arguments,
  expiresAt: r.expiresAt.toISOString(),
  ...(r.privateInput ? { privateInput: true as const, inputSchema: r.inputSchema } : {}),
});

/** The envelope of a response row in a given status (stored envelopes win once terminal). */
export function envelopeOf(
  row: TResponseRow,
  status: TResponseStatus = row.status,
  requiredAction: TRequiredAction | null = null,
): TEnvelope {
  return buildEnvelope({
    id: row.id,
    sessionId: row.sessionId,
    status,
    output: row.output,
    metadata: row.metadata,
    usage: row.usage,
    requiredAction,
    error: row.error,
  });
}

/**
 * Marks a response terminal, storing its envelope in the same statement: a reader that sees
 * the terminal status always sees the envelope (rule 7).
 */
export function finishResponse(
  tx: Db,
  row: TResponseRow,
  status: "completed" | "denied" | "cancelled" | "failed",
  extra: { error?: { code: string; message: string }; cancelReason?: string; outputChanged?: boolean } = {},
): { envelope: TEnvelope; stored: Promise<unknown> } {
  const envelope = envelopeOf({ ...row, error: extra.error ?? row.error }, status);
  // Sent right away; the caller may send its other writes before awaiting this one.
  const stored = tx
    .update(responses)
    .set({
      status,
      envelope,
      error: extra.error ?? row.error,
      cancelReason: extra.cancelReason ?? null,
      pendingAction: null,
      activeMs: row.activeMs,
      // The output and usage of a last step not stored yet go with the terminal row.
      ...(extra.outputChanged ? { output: row.output, usage: row.usage } : {}),
      completedAt: sql`now()`,
      leaseOwner: null,
      leaseExpiresAt: null,
    })
    .where(eq(responses.id, row.id))
    .then(() => undefined);
  return { envelope, stored };
}

/** Claims (or renews) the execution lease of an executing response for `owner`. */
export async function claimLease(db: Db, responseId: string, owner: string, leaseMs: number): Promise<TResponseRow | null> {
  const [row] = await db
    .update(responses)
    .set({ leaseOwner: owner, leaseExpiresAt: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .where(
      and(
        eq(responses.id, responseId),
        eq(responses.status, "in_progress"),
        or(isNull(responses.leaseOwner), eq(responses.leaseOwner, owner), lt(responses.leaseExpiresAt, sql`now()`)),
      ),
    )
    .returning();
  return row ?? null;
}

export async function renewLeases(db: Db, owner: string, ids: string[], leaseMs: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(responses)
    .set({ leaseExpiresAt: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .where(and(eq(responses.leaseOwner, owner), inArray(responses.id, ids)));
}

export async function releaseLease(db: Db, responseId: string, owner: string): Promise<void> {
  await db
    .update(responses)
    .set({ leaseOwner: null, leaseExpiresAt: null })
    .where(and(eq(responses.id, responseId), eq(responses.leaseOwner, owner)));
}

/** Executing responses no live owner holds: adopted at boot and by the periodic sweep. */
export async function orphanedResponses(db: Db): Promise<string[]> {
  const rows = await db
    .select({ id: responses.id })
    .from(responses)
    .where(
      and(
        eq(responses.status, "in_progress"),
        or(isNull(responses.leaseOwner), lt(responses.leaseExpiresAt, sql`now()`)),
      ),
    )
    .limit(100);
  return rows.map((r) => r.id);
}

/** Locks a response that has not settled yet (executing or waiting); null once terminal. */
export async function lockActiveOrSuspended(tx: Db, responseId: string): Promise<TResponseRow | null> {
  const [row] = await tx
    .update(responses)
    .set({ updatedAt: sql`now()` })
    .where(and(eq(responses.id, responseId), inArray(responses.status, ["in_progress", "requires_action"])))
    .returning();
  return row ?? null;
}
