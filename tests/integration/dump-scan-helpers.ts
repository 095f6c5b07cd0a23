import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";

/**
 * The byte sequences a value could rest as: UTF-8, UTF-16 (both byte orders), hex (both cases)
 * and base64 / base64url at each of the three alignments a surrounding stream could give it.
 */
export function spellings(value: string): Array<{ how: string; bytes: Buffer }> {
  const utf8 = Buffer.from(value, "utf8");
  const hex = utf8.toString("hex");
  const out = [
    { how: "UTF-8", bytes: utf8 },
    { how: "UTF-16LE", bytes: Buffer.from(value, "utf16le") },
    { how: "UTF-16BE", bytes: Buffer.from(value, "utf16le").swap16() },
    { how: "hex", bytes: Buffer.from(hex) },
    { how: "HEX", bytes: Buffer.from(hex.toUpperCase()) },
  ];
  for (let offset = 0; offset < 3; offset++) {
    const tail = utf8.subarray(offset);
    // Whole 3-byte groups only: their encoding does not depend on the bytes around the value.
    const aligned = tail.subarray(0, tail.length - (tail.length % 3));
    out.push({ how: `base64+${offset}`, bytes: Buffer.from(aligned.toString("base64")) });
    out.push({ how: `base64url+${offset}`, bytes: Buffer.from(aligned.toString("base64url")) });
  }
  return out;
}

/** `what (spelling)` for every value of `values` found in `bytes`. */
export function findSpellings(bytes: Buffer, values: Record<string, string>): string[] {
  const hits: string[] = [];
  for (const [what, value] of Object.entries(values)) {
    for (const { how, bytes: needle } of spellings(value)) if (bytes.includes(needle)) hits.push(`${what} (${how})`);
  }
  return hits;
}

/** Every regular file under `dir` with its bytes (symbolic links are not followed). */
export function filesUnder(dir: string): Array<{ path: string; bytes: Buffer }> {
  const files: Array<{ path: string; bytes: Buffer }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isDirectory()) files.push(...filesUnder(path));
    else if (stat.isFile()) files.push({ path, bytes: readFileSync(path) });
  }
  return files;
}

/** Rows of a raw query on either driver (postgres.js returns an array, PGlite `{ rows }`). */
async function queryRows<T>(db: Db, query: string): Promise<T[]> {
  const result = (await db.execute(sql.raw(query))) as unknown;
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/**
 * Every row of every table outside the system schemas, as text (`row_to_json`): what a logical
 * dump holds, including values PostgreSQL compressed out of sight of a byte scan.
 */
export async function logicalDump(db: Db): Promise<string> {
  const tables = await queryRows<{ name: string }>(
    db,
    "select format('%I.%I', table_schema, table_name) as name from information_schema.tables where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') order by 1",
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await queryRows<{ row: string }>(db, `select row_to_json(t)::text as row from ${name} t`);
    parts.push(`-- ${name}\n${rows.map((r) => r.row).join("\n")}`);
  }
  return parts.join("\n");
}
