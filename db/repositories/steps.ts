import { and, eq, or, sql } from "drizzle-orm";
import type { Db } from "../client";
import { jsonOrNull, prepared, rawSlot } from "../prepared";
import { responseSteps } from "../schema";

export type TStepRow = typeof responseSteps.$inferSelect;
export type TStepWrite = { responseId: string; key: string; status: TStepRow["status"]; result: unknown; completedAt: Date | null };

/** Every step a response recorded (its tool results, settlements, markers). */
export const stepsOf = prepared<{ id: string }, TStepRow[]>("steps_of", (db) => db.select().from(responseSteps).where(eq(responseSteps.responseId, sql.placeholder("id"))));

/** Up to this many rows per statement are built once; more (rare) are built for the call. */
const PREPARED_ROWS = 4;

const upserting = (db: Db, n: number) =>
  db
    .insert(responseSteps)
    .values(
      Array.from({ length: n }, (_, i) => ({
        responseId: rawSlot(`r${i}`),
        key: rawSlot(`k${i}`),
        status: rawSlot(`s${i}`),
        result: rawSlot(`v${i}`),
        completedAt: rawSlot(`c${i}`),
      })),
    )
    .onConflictDoUpdate({
      target: [responseSteps.responseId, responseSteps.key],
      set: { status: sql`excluded.status`, result: sql`excluded.result`, completedAt: sql`excluded.completed_at` },
    })
    .returning();

const upserts = Array.from({ length: PREPARED_ROWS }, (_, i) => prepared<Record<string, unknown>, TStepRow[]>(`upsert_steps_${i + 1}`, (db) => upserting(db, i + 1)));

/** Stores steps (a key written again replaces its row); returns them as stored. */
export function upsertSteps(db: Db, rows: readonly TStepWrite[]): Promise<TStepRow[]> {
  if (rows.length === 0) return Promise.resolve([]);
  const values: Record<string, unknown> = {};
  rows.forEach((row, i) => {
    values[`r${i}`] = row.responseId;
    values[`k${i}`] = row.key;
    values[`s${i}`] = row.status;
    values[`v${i}`] = jsonOrNull(row.result);
    values[`c${i}`] = row.completedAt?.toISOString() ?? null;
  });
  const statement = upserts[rows.length - 1];
  if (statement) return statement(db, values);
  return upserting(db, rows.length).prepare("upsert_steps").execute(values);
}

/** The results of the completed steps among `refs` (a response and a step key each), in no order. */
export async function completedStepResults(db: Db, refs: ReadonlyArray<{ responseId: string; key: string }>): Promise<Array<Pick<TStepRow, "responseId" | "key" | "result">>> {
  return db
    .select({ responseId: responseSteps.responseId, key: responseSteps.key, result: responseSteps.result })
    .from(responseSteps)
    .where(and(eq(responseSteps.status, "completed"), or(...refs.map((r) => and(eq(responseSteps.responseId, r.responseId), eq(responseSteps.key, r.key))))));
}
