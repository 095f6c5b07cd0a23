import type { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import type { Db, DbHandle } from "../../../db/client";
import * as schema from "../../../db/schema";

/** Not a procedure's own SQL: auth lookups, and the host's expiry sweep running meanwhile. */
export const NOT_THE_PROCEDURE = /from "(api_keys|users|login_sessions|accounts)"\s+(inner join "users" on .*?)?where|"expires_at" <= \$2\) limit/i;

/** A drizzle instance over the same client that records the SQL the app sends while `on` (all but what `skip` matches). */
export function capturingDb(handle: DbHandle, skip: RegExp = NOT_THE_PROCEDURE) {
  const state = { on: false, queries: [] as Array<{ sql: string; params: unknown[] }> };
  const logger = { logQuery: (sql: string, params: unknown[]) => void (state.on && !skip.test(sql) && state.queries.push({ sql, params })) };
  const db = handle.kind === "postgres" ? drizzlePostgres(handle.sql as never, { schema, logger }) : drizzlePglite((handle.db as unknown as { $client: PGlite }).$client, { schema, logger });
  return { state, handle: { ...handle, db: db as unknown as Db } };
}
