import { type SQL, sql } from "drizzle-orm";
import type { TPendingType } from "../../server/core/pending";
import { type Db, rowsOf } from "../client";

/** One kind's query of its pending rows whose time is up, selecting `(type, id)` (built by that kind's repository). */
export type TDueQuery = SQL;

/** The due rows of every kind in one statement: their queries joined with `union all`, at most `limit` rows. */
export async function duePendingActions(db: Db, queries: readonly TDueQuery[], limit: number): Promise<Array<{ type: TPendingType; id: string }>> {
  const query = sql.join(
    queries.map((due) => sql`(${due})`),
    sql` union all `,
  );
  const result = (await db.execute(sql`${query} limit ${limit}`)) as unknown;
  return rowsOf<{ type: TPendingType; id: string }>(result);
}
