import { type Column, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client";

type TPrepared<R> = { execute: (values?: Record<string, unknown>) => Promise<R> };
type TPreparable<R> = { prepare: (name: string) => TPrepared<R> };

/**
 * A statement whose SQL is built once: the one way hot statements are prepared. Drizzle builds a
 * statement's text from its query builder on every call, which costs tens to hundreds of
 * microseconds of CPU for a wide row (the hot path of an approval round trip ran it about twenty
 * times). A statement written with `sql.placeholder`
 * for everything that varies is built on its first use and then executed with the values given,
 * on whichever database or transaction the caller passes: drizzle's own prepared query, with its
 * own result mapping, run through that handle's connection.
 *
 * Drizzle binds a prepared query to the session it was prepared on; running it on another one
 * uses the session's `client`, which both drivers (postgres.js, PGlite) keep under that name. A
 * handle without one gets the statement built for it, as drizzle would (slower, same result).
 */
export function prepared<V extends Record<string, unknown>, R>(name: string, build: (db: Db) => TPreparable<R>): (db: Db, values: V) => Promise<R> {
  // One template per driver: a process may hold both kinds of database (tests do).
  const templates = new Map<unknown, TPrepared<R>>();
  return (db, values) => {
    const session = (db as unknown as { session?: { client?: unknown; constructor: unknown } }).session;
    if (session?.client === undefined) return build(db).prepare(name).execute(values);
    let template = templates.get(session.constructor);
    if (!template) {
      template = build(db).prepare(name);
      templates.set(session.constructor, template);
    }
    const bound = Object.create(template) as TPrepared<R> & { client: unknown };
    bound.client = session.client;
    return bound.execute(values);
  };
}

/**
 * A placeholder whose values `column` encodes as drizzle does (JSON text for jsonb, ISO text for
 * timestamps). Never give it null: drizzle encodes a placeholder's null with the column too, so a
 * jsonb column would store the JSON value `null` instead of SQL NULL (use `jsonOrNull` there).
 */
export const slot = (name: string, column: Column): SQL => sql`${sql.param(sql.placeholder(name), column)}`;

/** A placeholder whose value reaches the driver as given: ids, text, numbers, null, JSON text. */
export const rawSlot = (name: string): SQL => sql`${sql.placeholder(name)}`;

/** The value of a nullable jsonb column for a `rawSlot`: its JSON text, or SQL NULL. */
export const jsonOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));
