import { and, eq, getTableColumns, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { buildEnvelope, type TEnvelope, type TRequiredAction } from "../../server/core/envelope";
import type { TPendingRef } from "../../server/core/pending";
import type { TResponseStatus } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { jsonOrNull, prepared, rawSlot, slot } from "../prepared";
import { type approvals, type clientToolRequests, responses } from "../schema";

export type TResponseRow = typeof responses.$inferSelect;

export async function getResponse(db: Db, responseId: string): Promise<TResponseRow | null> {
  const [row] = await responseById(db, { id: responseId });
  return row ?? null;
}

const responseById = prepared<{ id: string }, TResponseRow[]>("get_response", (db) =>
  db
    .select()
    .from(responses)
    .where(eq(responses.id, sql.placeholder("id"))),
);

/**
 * A response as a reader needs it: who may read it, and its envelope or what makes one. Not its
 * input, attachments, policy or lease, which a poll or a subscription would otherwise decode
 * every time (a conversation's input can be large).
 */
const viewColumns = {
  id: responses.id,
  sessionId: responses.sessionId,
  userId: responses.userId,
  status: responses.status,
  metadata: responses.metadata,
  usage: responses.usage,
  error: responses.error,
  pendingAction: responses.pendingAction,
  envelope: responses.envelope,
  /** Null once the envelope is stored: the envelope holds it. */
  output: sql<TResponseRow["output"] | null>`case when ${responses.envelope} is null then ${responses.output} end`.mapWith(responses.output),
};
/** A response's row as `viewColumns` reads it. */
export type TResponseView = Pick<TResponseRow, Exclude<keyof typeof viewColumns, "output">> & { output: TResponseRow["output"] | null };

/** One response's view (null when there is none). */
export async function getResponseView(db: Db, responseId: string): Promise<TResponseView | null> {
  const [row] = await responseViewById(db, { id: responseId });
  return row ?? null;
}

const responseViewById = prepared<{ id: string }, TResponseView[]>("get_response_view", (db) => db.select(viewColumns).from(responses).where(eq(responses.id, sql.placeholder("id"))));

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
  row: Pick<TResponseRow, "id" | "sessionId" | "status" | "output" | "metadata" | "usage" | "error">,
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
  row: TLockedRow,
  status: "completed" | "denied" | "cancelled" | "failed",
  extra: { error?: { code: string; message: string }; cancelReason?: string; outputChanged?: boolean } = {},
): { envelope: TEnvelope; stored: Promise<unknown> } {
  const envelope = envelopeOf({ ...row, error: extra.error ?? row.error }, status);
  const values = { id: row.id, status, envelope, error: jsonOrNull(extra.error ?? row.error), cancelReason: extra.cancelReason ?? null, activeMs: row.activeMs };
  // Sent right away; the caller may send its other writes before awaiting this one. The output
  // and usage of a last step not stored yet go with the terminal row.
  const stored = (extra.outputChanged ? finishWithOutput(tx, { ...values, output: row.output, usage: row.usage }) : finish(tx, values)).then(() => undefined);
  return { envelope, stored };
}

type TFinishValues = { id: string; status: TResponseStatus; envelope: TEnvelope; error: string | null; cancelReason: string | null; activeMs: number };

const finishing = (db: Db, withOutput: boolean) =>
  db
    .update(responses)
    .set({
      status: slot("status", responses.status),
      envelope: slot("envelope", responses.envelope),
      error: rawSlot("error"),
      cancelReason: rawSlot("cancelReason"),
      pendingAction: null,
      activeMs: rawSlot("activeMs"),
      ...(withOutput ? { output: slot("output", responses.output), usage: slot("usage", responses.usage) } : {}),
      completedAt: sql`now()`,
      leaseOwner: null,
      leaseExpiresAt: null,
    })
    .where(eq(responses.id, sql.placeholder("id")));

const finish = prepared<TFinishValues, unknown>("finish_response", (db) => finishing(db, false));
const finishWithOutput = prepared<TFinishValues & Pick<TResponseRow, "output" | "usage">, unknown>("finish_response_output", (db) => finishing(db, true));

/** Stores a running response's output and usage so far. */
export const storeOutput = prepared<Pick<TResponseRow, "id" | "output" | "usage">, unknown>("store_output", (db) =>
  db
    .update(responses)
    .set({ output: slot("output", responses.output), usage: slot("usage", responses.usage) })
    .where(eq(responses.id, sql.placeholder("id"))),
);

/** The lease placeholder's value: the lease runs `leaseMs` from the statement's own clock. */
export const leaseFor = (leaseMs: number): string => `${leaseMs} milliseconds`;
const leaseUntil = () => sql`now() + ${sql.placeholder("lease")}::interval`;

/**
 * What a commit of an attempt reads of its locked run: its counters, what its envelope is made of
 * and what it waits on. Not the input, attachments, policy or credential, which the attempt has
 * from its start and which every commit would otherwise decode again.
 */
const lockedColumns = {
  id: responses.id,
  sessionId: responses.sessionId,
  status: responses.status,
  output: responses.output,
  metadata: responses.metadata,
  usage: responses.usage,
  error: responses.error,
  pendingAction: responses.pendingAction,
  activeMs: responses.activeMs,
  nextSeq: responses.nextSeq,
  nextFrameSeq: responses.nextFrameSeq,
};
/** A run's row as `lockedColumns` reads it. */
export type TLockedRow = Pick<TResponseRow, keyof typeof lockedColumns>;

/**
 * Locks a still-executing response for a commit of its attempt and renews its lease: the row as
 * locked, or none once the run settled or was adopted.
 */
export const lockExecuting = prepared<{ id: string; lease: string }, TLockedRow[]>("lock_executing", (db) =>
  db
    .update(responses)
    .set({ updatedAt: sql`now()`, leaseExpiresAt: leaseUntil() })
    .where(and(eq(responses.id, sql.placeholder("id")), eq(responses.status, "in_progress")))
    .returning(lockedColumns),
);

/**
 * A claimed run with what its resumed attempt reads beside it: its session's workspace directory
 * (null when the session is not stored) and how many steering messages wait for it.
 */
export type TClaimedRow = TResponseRow & { workspaceDir: string | null; queuedSteering: number };

/**
 * Takes a run out of `requires_action` for `owner`'s host when it still waits on exactly the
 * pending action `pendingId`: the claimed row with its workspace and queued steering (one
 * statement, not one more beside it), or none.
 */
export const claimWaiting = prepared<{ id: string; pendingId: string; owner: string; lease: string }, TClaimedRow[]>("claim_waiting", (db) =>
  db
    .update(responses)
    .set({ status: "in_progress", pendingAction: null, leaseOwner: rawSlot("owner"), leaseExpiresAt: leaseUntil() })
    .where(and(eq(responses.id, sql.placeholder("id")), eq(responses.status, "requires_action"), sql`${responses.pendingAction}->>'id' = ${sql.placeholder("pendingId")}`))
    // Written out qualified: drizzle renders the columns of an update's RETURNING without their table,
    // so inside these subqueries "id" would name the subquery's own table.
    .returning({
      ...getTableColumns(responses),
      workspaceDir: sql<string | null>`(select s.workspace_dir from agent_sessions s where s.id = responses.session_id)`,
      queuedSteering: sql<number>`(select count(*)::int from steering_messages m where m.response_id = responses.id and m.status = 'queued')`,
    }),
);

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

/** The status of a response; null when there is none. */
export async function responseStatus(db: Db, responseId: string): Promise<TResponseStatus | null> {
  const [row] = await db.select({ status: responses.status }).from(responses).where(eq(responses.id, responseId));
  return row?.status ?? null;
}

/** Locks a response (`for update`) and reads its status; null when there is none. */
export async function lockResponseStatus(tx: Db, responseId: string): Promise<TResponseStatus | null> {
  const [row] = await tx.select({ status: responses.status }).from(responses).where(eq(responses.id, responseId)).for("update");
  return row?.status ?? null;
}

/** The agent a response runs; null when there is none. */
export async function responseAgent(db: Db, responseId: string): Promise<string | null> {
  const [row] = await db.select({ agent: responses.agent }).from(responses).where(eq(responses.id, responseId));
  return row?.agent ?? null;
}

/** Suspends an executing response on a pending action: it waits (`requires_action`), its lease given up, its active time stored. */
export async function suspendResponse(tx: Db, responseId: string, values: { pendingAction: TPendingRef; activeMs: number }): Promise<void> {
  await tx
    .update(responses)
    .set({ status: "requires_action", pendingAction: values.pendingAction, leaseOwner: null, leaseExpiresAt: null, activeMs: values.activeMs })
    .where(eq(responses.id, responseId));
}

/** Stores a new response already claimed by `values.leaseOwner`, its lease running `leaseMs` from the statement's clock; returns it as stored. */
export async function insertClaimedResponse(tx: Db, values: Omit<typeof responses.$inferInsert, "leaseExpiresAt">, leaseMs: number): Promise<TResponseRow | null> {
  const [row] = await tx
    .insert(responses)
    .values({ ...values, leaseExpiresAt: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .returning();
  return row ?? null;
}
