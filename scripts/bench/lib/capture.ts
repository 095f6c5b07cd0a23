import type { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import pino from "pino";
import { type Db, type DbHandle, migrateDb, openDb } from "../../../db/client";
import * as schema from "../../../db/schema";
import { createApp } from "../../../server/app";
import { testConfig } from "../../../server/testing/test-app";
import { freshDatabase, openRaw, rawFromPglite, type TCtx } from "./env";

/** Not a procedure's own SQL: auth lookups, and the host's expiry sweep running meanwhile. */
export const NOT_THE_PROCEDURE = /from "(api_keys|users|login_sessions|accounts)"\s+(inner join "users" on .*?)?where|"expires_at" <= \$2\) limit/i;

/** A drizzle instance over the same client that records the SQL the app sends while `on` (all but what `skip` matches). */
export function capturingDb(handle: DbHandle, skip: RegExp = NOT_THE_PROCEDURE) {
  const state = { on: false, queries: [] as Array<{ sql: string; params: unknown[] }> };
  const logger = { logQuery: (sql: string, params: unknown[]) => void (state.on && !skip.test(sql) && state.queries.push({ sql, params })) };
  const db = handle.kind === "postgres" ? drizzlePostgres(handle.sql as never, { schema, logger }) : drizzlePglite((handle.db as unknown as { $client: PGlite }).$client, { schema, logger });
  return { state, handle: { ...handle, db: db as unknown as Db } };
}

/**
 * The app in this process on a fresh database of its own (migrated), with the bare driver on the
 * same database and the SQL capture: what items 7 and 8 measure procedures on. `close` ends all of it.
 */
export async function appOnFreshDatabase(ctx: TCtx) {
  const fresh = await freshDatabase(ctx);
  const handle = await openDb({ url: fresh.url, dataDir: fresh.url ? undefined : fresh.pgliteDir, poolSize: 10 });
  await migrateDb(handle);
  const raw = handle.pglite ? rawFromPglite(handle.pglite) : await openRaw(fresh, { max: 2 });
  const warnings: string[] = [];
  const capture = capturingDb(handle);
  const app = await createApp({ db: capture.handle, config: testConfig({ dataDir: fresh.dataDir }), log: pino({ level: "warn" }, { write: (l: string) => void warnings.push(l) }) });
  return {
    handle,
    raw,
    capture,
    app,
    warnings,
    close: async () => {
      await app.close();
      if (handle.kind === "postgres") await raw.close();
      await handle.close();
      await fresh.drop();
    },
  };
}
