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
 * Opens the database: PostgreSQL when `url` is given, otherwise PGlite in `dataDir`
 * (in memory when `dataDir` is undefined). This is the only file that imports a driver.
 */
export async function openDb(options: { url?: string; dataDir?: string; poolSize?: number }): Promise<DbHandle> {
  if (options.url) {
    const sql = postgres(options.url, { max: options.poolSize ?? 10, onnotice: () => {} });
    const db = drizzlePostgres(sql, { schema }) as unknown as Db;
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
