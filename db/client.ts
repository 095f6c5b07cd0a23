import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { PgliteStatements, type TPgliteTransaction } from "./pglite-statements";
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
  /** PGlite only: the database through PGlite's own API, its statements unprepared (the benchmarks' limits run on it; the app goes through `db`). */
  pglite?: PGlite;
  /** PGlite only: the whole database as a tarball, which `openDb({ image })` opens again (db/testing.ts). */
  dump?: () => Promise<Blob>;
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
 * Transactions are `pipelinedTransaction`s.
 */
function preparing<T extends postgres.Sql>(sql: T, track?: (query: Promise<unknown>) => void): T {
  return new Proxy(sql, {
    get(target, property) {
      if (property === "unsafe") {
        return (query: string, parameters?: unknown[], queryOptions?: Record<string, unknown>) => {
          const pending = target.unsafe(query, parameters as never, { ...queryOptions, prepare: true });
          track?.(pending);
          return pending;
        };
      }
      if (property === "begin") {
        return (...args: unknown[]) => {
          const fn = args.pop() as (inner: postgres.Sql) => unknown;
          return pipelinedTransaction(target, typeof args[0] === "string" ? args[0] : "", fn);
        };
      }
      if (property === "savepoint") throw new Error("Nested transactions (savepoints) are not used by Countersign.");
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * One transaction on a reserved connection whose BEGIN is not waited for: it leaves with the first
 * statements, one wait fewer per transaction than postgres.js's `begin`, which waits for it. As
 * there, a statement that failed fails the transaction even when the caller caught its error, and
 * a COMMIT that PostgreSQL answers with ROLLBACK (the transaction had been aborted) is an error.
 */
async function pipelinedTransaction(pool: postgres.Sql, mode: string, fn: (inner: postgres.Sql) => unknown): Promise<unknown> {
  const connection = await pool.reserve();
  let failure: { error: unknown } | null = null;
  const track = (query: Promise<unknown>) => {
    query.catch((error: unknown) => {
      failure ??= { error };
    });
  };
  try {
    track(connection.unsafe(`begin ${mode.replace(/[^a-z ]/gi, "")}`));
    let result: unknown;
    try {
      result = await fn(preparing(connection, track));
      if (failure) throw (failure as { error: unknown }).error;
    } catch (error) {
      await connection.unsafe("rollback").catch(() => {});
      throw failure && error instanceof postgres.PostgresError && error.code === "25P02" ? (failure as { error: unknown }).error : error;
    }
    const committed = await connection.unsafe("commit");
    if (committed.command === "ROLLBACK") throw failure ? (failure as { error: unknown }).error : new Error("The database rolled the transaction back instead of committing it.");
    return result;
  } finally {
    connection.release();
  }
}

/**
 * The types drizzle has PGlite hand back as the text PostgreSQL sent (timestamp, timestamptz,
 * interval, date, and the arrays numeric[], timestamp[], timestamptz[], interval[], date[]),
 * as drizzle-orm/pglite's session lists them.
 */
const AS_TEXT: ReadonlySet<number> = new Set([1114, 1184, 1186, 1082, 1231, 1115, 1185, 1187, 1182]);
const asText = (value: string) => value;

/**
 * The PGlite handle drizzle runs its queries through: every statement prepared once
 * (db/pglite-statements.ts), in transactions too, and without drizzle's parsers for the types
 * PGlite already hands back as text. Drizzle gives PGlite parsers for those types with every
 * statement, and PGlite merged them into its own (318, one per type) for each result it parsed:
 * about 0.15 ms of CPU per statement (`select 1`: 0.11 ms without them, 0.28 ms with them). The
 * PGlite handle parses those types as text itself (`openDb`); parsers for any other type still go
 * through.
 */
function preparedPglite(client: PGlite): PGlite {
  const withoutTextParsers = (options?: Parameters<PGlite["query"]>[2]) => {
    if (!options?.parsers || !Object.keys(options.parsers).every((oid) => AS_TEXT.has(Number(oid)))) return options;
    const { parsers: _same, ...rest } = options;
    return rest;
  };
  const statements = new PgliteStatements(client, withoutTextParsers);
  // Built once per handle (every statement reads `query`), not on each property read. A transaction
  // is one of PgliteStatements (its BEGIN and COMMIT prepared too); drizzle uses only its `query`.
  const own: Record<PropertyKey, unknown> = {
    query: (text: string, params?: unknown[], options?: Parameters<PGlite["query"]>[2]) => statements.query(text, params, options),
    transaction: <R>(fn: (tx: TPgliteTransaction) => Promise<R>) => statements.transaction(fn),
  };
  return new Proxy(client, {
    get(object, property) {
      if (property in own) return own[property];
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/**
 * Opens the database: PostgreSQL when `url` is given, otherwise PGlite in `dataDir`
 * (in memory when `dataDir` is undefined), starting from `image` (a handle's `dump()`) when given
 * instead of an empty cluster. This file and db/pglite-statements.ts are the only ones that import a driver.
 */
export async function openDb(options: { url?: string; dataDir?: string; poolSize?: number; image?: Blob }): Promise<DbHandle> {
  if (options.url) {
    const sql = postgres(options.url, { max: options.poolSize ?? 10, onnotice: () => {} });
    const db = drizzlePostgres(preparing(sql), { schema }) as unknown as Db;
    return { db, kind: "postgres", sql, url: options.url, close: () => sql.end({ timeout: 5 }) };
  }
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const client = new PGlite({ ...(options.dataDir ? { dataDir: options.dataDir } : {}), ...(options.image ? { loadDataDir: options.image } : {}) });
  await client.waitReady;
  for (const oid of AS_TEXT) client.parsers[oid] = asText;
  const db = drizzlePglite({ client: preparedPglite(client), schema }) as unknown as Db;
  return { db, kind: "pglite", pglite: client, dump: () => client.dumpDataDir("none"), close: () => client.close() };
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
