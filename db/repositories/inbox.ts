import { and, asc, desc, eq, inArray, isNotNull, isNull, lte, type SQL, sql } from "drizzle-orm";
import type { TAgentPolicy } from "../../server/core/agent-policy";
import type { TRisk } from "../../server/core/vocabulary";
import type { Db } from "../client";
import { alias } from "drizzle-orm/pg-core";
import { approvals, responseEvents, responses, users } from "../schema";
import { beforeCursor, decodeCursor, exactTimestamp, type TPage, toPage } from "./keyset";

export type TInboxFilter = {
  scopeUserId: string | null;
  status: "pending" | "decided";
  agent?: string;
  userId?: string;
  risks?: readonly TRisk[];
  /** `ask`: an exec reviewer looked first and asked a person; `none`: policy `always`, no reviewer. */
  reviewer?: "ask" | "none";
  /** Only requests at least this old. */
  olderThanMs?: number;
  /** Only approvals whose approvers name one of these teams (`approvers.groups` of the run's policy); none when empty. */
  teams?: readonly string[];
  now: Date;
  cursor?: string | null;
  limit: number;
};

/** Approvals whose run's policy names one of `teams` among its approvers (an external approval's action approvers are kept there too). */
const decidedByTeams = (teams: readonly string[]): SQL =>
  teams.length === 0
    ? sql`false`
    : sql`jsonb_exists_any(${responses.agentPolicy} -> 'approvers' -> 'groups', array[${sql.join(
        teams.map((t) => sql`${t}`),
        sql`, `,
      )}]::text[])`;

/** Whoever decided an approval (the requester is `users`). */
const decider = alias(users, "decider");

/** A page of approvals for the inbox: pending oldest first (triage order), decided newest first; the requester's and the decider's names with their emails, and the policy its decisions follow. */
export async function listInbox(
  db: Db,
  filter: TInboxFilter,
): Promise<
  TPage<typeof approvals.$inferSelect & { agent: string; agentPolicy: TAgentPolicy | null; user: string; userEmail: string; decidedByName: string | null; decidedByEmail: string | null; cursorAt: string }>
> {
  const where: (SQL | undefined)[] = [
    // Literal predicates, so the planner can prove the partial indexes apply.
    filter.status === "pending" ? sql`${approvals.status} = 'pending'` : sql`${approvals.status} <> 'pending'`,
    filter.scopeUserId ? eq(approvals.userId, filter.scopeUserId) : undefined,
    filter.userId ? eq(approvals.userId, filter.userId) : undefined,
    filter.agent ? eq(responses.agent, filter.agent) : undefined,
    filter.risks && filter.risks.length > 0 ? inArray(approvals.risk, [...filter.risks]) : undefined,
    filter.reviewer === "ask" ? isNotNull(approvals.reviewer) : filter.reviewer === "none" ? isNull(approvals.reviewer) : undefined,
    filter.olderThanMs ? lte(approvals.createdAt, new Date(filter.now.getTime() - filter.olderThanMs)) : undefined,
    filter.teams ? decidedByTeams(filter.teams) : undefined,
  ];
  const cursor = filter.status === "decided" ? decodeCursor(filter.cursor) : null;
  if (cursor) where.push(beforeCursor(approvals.createdAt, approvals.id, cursor));
  const rows = await db
    .select({
      a: approvals,
      agent: responses.agent,
      agentPolicy: responses.agentPolicy,
      user: users.name,
      userEmail: users.email,
      deciderName: decider.name,
      deciderEmail: decider.email,
      cursorAt: exactTimestamp(approvals.createdAt),
    })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .innerJoin(users, eq(users.id, approvals.userId))
    .leftJoin(decider, eq(decider.id, approvals.decidedBy))
    .where(and(...where))
    .orderBy(...(filter.status === "pending" ? [asc(approvals.createdAt), asc(approvals.id)] : [desc(approvals.createdAt), desc(approvals.id)]))
    .limit(filter.limit + 1);
  const page = toPage(
    rows.map((r) => ({ ...r.a, agent: r.agent, agentPolicy: r.agentPolicy, user: r.user, userEmail: r.userEmail, decidedByName: r.deciderName, decidedByEmail: r.deciderEmail, cursorAt: r.cursorAt })),
    filter.limit,
  );
  // Pending items are few and always shown whole: no cursor.
  return filter.status === "pending" ? { rows: page.rows, nextCursor: null } : page;
}

/** Approvals by id with their response's agent and the policy its decisions follow (for bulk decisions). */
export async function approvalsByIds(db: Db, ids: readonly string[]) {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ a: approvals, agent: responses.agent, agentPolicy: responses.agentPolicy })
    .from(approvals)
    .innerJoin(responses, eq(responses.id, approvals.responseId))
    .where(inArray(approvals.id, [...ids]));
  return rows.map((r) => ({ ...r.a, agent: r.agent, agentPolicy: r.agentPolicy }));
}

export type TContextTurn = { responseId: string; role: "user" | "assistant" | "tool" | "result"; text: string; at: string };

const CONTEXT_TYPES = ["response.text.delta", "response.tool_call", "response.tool_result"];

/** A short readable preview of a value (inputs, tool arguments, results). */
function preview(value: unknown, max = 400): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** What the user asked, as text: a string input, or the script's turns of a scripted agent. */
function inputText(input: unknown): string {
  if (typeof input === "string") return input;
  const script = (input as { script?: Array<{ text?: string }> } | null)?.script;
  if (Array.isArray(script)) return `(scripted run, ${script.length} turn${script.length === 1 ? "" : "s"})`;
  return preview(input);
}

/**
 * The last few turns of a session up to and including `responseId`: each response's input,
 * the assistant's text (deltas joined per item), tool calls and results, oldest first.
 */
export async function sessionContext(db: Db, input: { sessionId: string; responseId: string; responses?: number; maxTurns?: number }): Promise<TContextTurn[]> {
  const [current] = await db.select({ createdAt: responses.createdAt }).from(responses).where(eq(responses.id, input.responseId));
  if (!current) return [];
  const recent = await db
    .select({ id: responses.id, input: responses.input, createdAt: responses.createdAt })
    .from(responses)
    .where(and(eq(responses.sessionId, input.sessionId), lte(responses.createdAt, current.createdAt)))
    .orderBy(desc(responses.createdAt))
    .limit(input.responses ?? 3);
  const ids = recent.map((r) => r.id);
  const events =
    ids.length === 0
      ? []
      : await db
          .select({ responseId: responseEvents.responseId, seq: responseEvents.seq, type: responseEvents.type, data: responseEvents.data, createdAt: responseEvents.createdAt })
          .from(responseEvents)
          .where(and(inArray(responseEvents.responseId, ids), inArray(responseEvents.type, CONTEXT_TYPES)))
          .orderBy(desc(responseEvents.id))
          .limit(400);
  const turns: TContextTurn[] = [];
  for (const r of [...recent].reverse()) {
    turns.push({ responseId: r.id, role: "user", text: inputText(r.input), at: r.createdAt.toISOString() });
    const own = events.filter((e) => e.responseId === r.id).sort((a, b) => a.seq - b.seq);
    const open: { text: { itemId: unknown; parts: string[]; at: string } | null } = { text: null };
    const flush = () => {
      const t = open.text;
      if (t?.parts.join("").trim()) turns.push({ responseId: r.id, role: "assistant", text: preview(t.parts.join(""), 800), at: t.at });
      open.text = null;
    };
    for (const e of own) {
      const d = e.data as Record<string, unknown>;
      if (e.type === "response.text.delta") {
        if (open.text?.itemId !== d.itemId) flush();
        open.text ??= { itemId: d.itemId, parts: [], at: e.createdAt.toISOString() };
        open.text.parts.push(String(d.delta ?? ""));
        continue;
      }
      flush();
      if (e.type === "response.tool_call") turns.push({ responseId: r.id, role: "tool", text: `${String(d.name)} ${preview(d.arguments, 300)}`, at: e.createdAt.toISOString() });
      else turns.push({ responseId: r.id, role: "result", text: `${String(d.name)} → ${preview(d.output, 300)}`, at: e.createdAt.toISOString() });
    }
    flush();
  }
  return turns.slice(-(input.maxTurns ?? 12));
}

/** Whose an approval is and which session and response it belongs to (what its context is read from), or null. */
export async function approvalPlace(db: Db, approvalId: string): Promise<{ userId: string; sessionId: string; responseId: string } | null> {
  const [row] = await db.select({ userId: approvals.userId, sessionId: approvals.sessionId, responseId: approvals.responseId }).from(approvals).where(eq(approvals.id, approvalId));
  return row ?? null;
}

/** Whose an approval is and the response it belongs to (whose files it shows), or null. */
export async function approvalRun(db: Db, approvalId: string): Promise<{ userId: string; responseId: string } | null> {
  const [row] = await db.select({ userId: approvals.userId, responseId: approvals.responseId }).from(approvals).where(eq(approvals.id, approvalId));
  return row ?? null;
}
