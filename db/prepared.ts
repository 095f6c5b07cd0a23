import { PgTransaction } from "drizzle-orm/pg-core";
import type { Db } from "./client";

const statements = new WeakMap<object, Map<string, unknown>>();

/**
 * A query built once per database handle (drizzle `.prepare(name)`: the SQL is not rebuilt on
 * each call, and postgres.js prepares it on the server). For the hottest reads only. Inside a
 * transaction it returns null: a statement prepared on the root handle would run outside it.
 */
export function prepared<T>(db: Db, name: string, build: (db: Db) => T): T | null {
  if (db instanceof PgTransaction) return null;
  let byName = statements.get(db);
  if (!byName) {
    byName = new Map();
    statements.set(db, byName);
  }
  let statement = byName.get(name) as T | undefined;
  if (statement === undefined) {
    statement = build(db);
    byName.set(name, statement);
  }
  return statement;
}
