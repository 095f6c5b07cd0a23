import { type AnyColumn, type SQL, sql } from "drizzle-orm";

/**
 * Keyset pagination on (created_at, id), newest first. The cursor carries the timestamp as
 * PostgreSQL prints it with microseconds (a JS Date would round to milliseconds and skip rows).
 */
export type TKeysetCursor = { at: string; id: string };

/** `2025-01-02T03:04:05.123456Z` for a timestamptz column, exact to the microsecond. */
export const exactTimestamp = (column: AnyColumn | SQL): SQL<string> =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Rows strictly after the cursor in (created_at desc, id desc) order. */
export const beforeCursor = (createdAt: AnyColumn, id: AnyColumn, cursor: TKeysetCursor): SQL =>
  sql`(${createdAt}, ${id}) < (${cursor.at}::timestamptz, ${cursor.id})`;

export const encodeCursor = (cursor: TKeysetCursor): string => Buffer.from(`${cursor.at}|${cursor.id}`, "utf8").toString("base64url");

/** Decodes a cursor from a client; null for anything malformed (the first page is served). */
export function decodeCursor(value: string | null | undefined): TKeysetCursor | null {
  if (!value) return null;
  const text = Buffer.from(value, "base64url").toString("utf8");
  const bar = text.indexOf("|");
  if (bar < 0) return null;
  const at = text.slice(0, bar);
  const id = text.slice(bar + 1);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(at) || id.length === 0 || id.length > 200) return null;
  return { at, id };
}

/** Escapes `%`, `_` and `\` for a LIKE / ILIKE pattern and wraps it in `%…%`. */
export const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** One page of a keyset list; `nextCursor` is null on the last page. */
export type TPage<T> = { rows: T[]; nextCursor: string | null };

/** Splits `limit + 1` fetched rows into a page and the cursor of its last row. */
export function toPage<T extends { cursorAt: string; id: string }>(rows: T[], limit: number): TPage<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last ? encodeCursor({ at: last.cursorAt, id: last.id }) : null };
}
