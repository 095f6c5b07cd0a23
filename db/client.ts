import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "./schema";

/** The one database type every repository and service is written against, whatever the driver. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
export type DbKind = "pglite" | "postgres";

/** The rows of a `db.execute` result: postgres.js returns them as the result itself, PGlite under `rows`. */
export const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

export type DbHandle = {
  db: Db;
  kind: DbKind;
  /** The postgres.js client (PostgreSQL only): used for LISTEN/NOTIFY. */
  sql?: postgres.Sql;
  url?: string;
  close: () => Promise<void>;
};

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

/**
 * The postgres.js handle drizzle runs its queries through, with every statement prepared (named,
 * per connection), in transactions too. Drizzle sends its statements unprepared, and postgres.js
 * then asks the server for the parameter types before each one with parameters: two waits for
 * the database per statement, none of them pipelined. Prepared, a statement seen before on the
 * connection is one wait, and statements sent together in a transaction go out as one batch.
 * postgres.js keeps the prepared statements per connection; connections are replaced after
 * 30–60 minutes (its `max_lifetime`), which bounds what accumulates from SQL with varying shapes.
 */
function preparing<T extends postgres.Sql>(sql: T): T {
  return new Proxy(sql, {
    get(target, property) {
      if (property === "unsafe") {
        return (query: string, parameters?: unknown[], queryOptions?: Record<string, unknown>) => target.unsafe(query, parameters as never, { ...queryOptions, prepare: true });
      }
      if (property === "begin" || property === "savepoint") {
        const original = Reflect.get(target, property, target) as (...args: unknown[]) => unknown;
        return (...args: unknown[]) => {
          const fn = args.pop() as (inner: postgres.Sql) => unknown;
          return original.call(target, ...args, (inner: postgres.Sql) => fn(preparing(inner)));
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Opens the database: PostgreSQL when `url` is given, otherwise PGlite in `dataDir`
 * (in memory when `dataDir` is undefined). This is the only file that imports a driver.
 */
export async function openDb(options: { url?: string; dataDir?: string; poolSize?: number }): Promise<DbHandle> {
  if (options.url) {
    const sql = postgres(options.url, { max: options.poolSize ?? 10, onnotice: () => {} });
    const db = drizzlePostgres(preparing(sql), { schema }) as unknown as Db;
    return { db, kind: "postgres", sql, url: options.url, close: () => sql.end({ timeout: 5 }) };
  }
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const client = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return { db, kind: "pglite", close: () => client.close() };
}

/** Applies the committed drizzle-kit migrations; serialized across processes on PostgreSQL. */
export async function migrateDb(handle: DbHandle): Promise<void> {
  if (handle.kind === "pglite") {
    await migratePglite(handle.db as never, { migrationsFolder });
    return;
  }
  if (!handle.url) throw new Error("postgres handle without url");
  // Replicas booting together must not race on the migrations table: one connection holds
  // a session advisory lock while it migrates.
  const sql = postgres(handle.url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(727274)`;
    await migratePostgres(drizzlePostgres(sql), { migrationsFolder });
    await sql`select pg_advisory_unlock(727274)`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
