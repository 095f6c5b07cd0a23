import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { type Db, rowsOf } from "../client";
import { approvals, clientToolRequests, questions, responses } from "../schema";

/** Rows of a grouped count: the labels and `n`. */
type TCounted<K extends string> = Array<Record<K, string> & { n: number }>;


/** Pending approvals by agent and risk: one grouped query over the pending partial index. */
export async function pendingApprovalCounts(db: Db): Promise<TCounted<"agent" | "risk">> {
  return rowsOf(
    await db.execute(sql`select r.agent as agent, a.risk::text as risk, count(*)::int as n from ${approvals} a join ${responses} r on r.id = a.response_id where a.status = 'pending' group by 1, 2`),
  );
}

/** Pending client-tool requests by agent. */
export async function pendingClientToolCounts(db: Db): Promise<TCounted<"agent">> {
  return rowsOf(
    await db.execute(sql`select r.agent as agent, count(*)::int as n from ${clientToolRequests} c join ${responses} r on r.id = c.response_id where c.status = 'pending' group by 1`),
  );
}

/** Pending questions by agent; gateway questions outside a run count under agent "". */
export async function pendingQuestionCounts(db: Db): Promise<TCounted<"agent">> {
  return rowsOf(
    await db.execute(sql`select coalesce(r.agent, '') as agent, count(*)::int as n from ${questions} q left join ${responses} r on r.id = q.response_id where q.status = 'pending' group by 1`),
  );
}

/** Runs (responses) by status. */
export async function runStatusCounts(db: Db): Promise<TCounted<"status">> {
  return rowsOf(await db.execute(sql`select status::text as status, count(*)::int as n from ${responses} group by 1`));
}

const journalFile = fileURLToPath(new URL("../migrations/meta/_journal.json", import.meta.url));
let expectedMigrations: { count: number; lastWhen: number } | null = null;

/** The migrations this build ships (from drizzle-kit's journal, read once). */
function shippedMigrations(): { count: number; lastWhen: number } {
  if (!expectedMigrations) {
    const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: Array<{ when: number }> };
    expectedMigrations = { count: journal.entries.length, lastWhen: Math.max(...journal.entries.map((e) => e.when)) };
  }
  return expectedMigrations;
}

/**
 * One round trip that proves the database answers and says whether every migration this build
 * ships is applied: drizzle records each applied migration with its journal time (`created_at`).
 */
export async function migrationState(db: Db): Promise<{ applied: number; expected: number; current: boolean }> {
  const shipped = shippedMigrations();
  const [row] = rowsOf<{ applied: number; last: string | number | null }>(
    await db.execute(sql`select count(*)::int as applied, max(created_at) as last from drizzle.__drizzle_migrations`),
  );
  const applied = row?.applied ?? 0;
  const last = row?.last === null || row?.last === undefined ? 0 : Number(row.last);
  return { applied, expected: shipped.count, current: last >= shipped.lastWhen };
}
