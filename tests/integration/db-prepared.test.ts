import { eq, sql } from "drizzle-orm";
import { jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DbHandle, rowsOf } from "../../db/client";
import { MAX_PREPARED } from "../../db/pglite-statements";
import { jsonOrNull, prepared, rawSlot, slot } from "../../db/prepared";
import { createTestDb, testDbKind } from "../../db/testing";

/**
 * A statement built once (db/prepared.ts) runs on whichever handle it is given: the root handle,
 * a transaction (and then it is part of it), or another database altogether. Values keep the
 * column encodings drizzle uses, and a null JSON value is SQL NULL.
 */
const probe = pgTable("prepared_probe", {
  id: text("id").primaryKey(),
  doc: jsonb("doc").$type<unknown>(),
  at: timestamp("at", { withTimezone: true }),
});

type TProbe = typeof probe.$inferSelect;

const insertProbe = prepared<{ id: string; doc: string | null; at: Date }, TProbe[]>("test_insert_probe", (db) =>
  db
    .insert(probe)
    .values({ id: rawSlot("id"), doc: rawSlot("doc"), at: slot("at", probe.at) })
    .returning(),
);
const probeById = prepared<{ id: string }, TProbe[]>("test_probe_by_id", (db) => db.select().from(probe).where(eq(probe.id, sql.placeholder("id"))));

let first: DbHandle;
let second: DbHandle;

beforeAll(async () => {
  first = await createTestDb();
  second = await createTestDb();
  for (const h of [first, second]) await h.db.execute(sql`create table prepared_probe (id text primary key, doc jsonb, at timestamptz)`);
});
afterAll(async () => {
  await first?.close();
  await second?.close();
});

const at = new Date("2026-12-02T10:00:00.000Z");

describe(`statements built once (${testDbKind()})`, () => {
  it("round-trips values with their column encodings; a null JSON value is SQL NULL, not JSON null", async () => {
    const [row] = await insertProbe(first.db, { id: "a", doc: jsonOrNull({ n: 1, list: ["x"] }), at });
    expect(row).toEqual({ id: "a", doc: { n: 1, list: ["x"] }, at });
    await insertProbe(first.db, { id: "b", doc: jsonOrNull(null), at });
    const nulls = rowsOf<{ id: string }>(await first.db.execute(sql`select id from prepared_probe where doc is null`));
    expect(nulls.map((r) => r.id)).toEqual(["b"]);
    expect(await probeById(first.db, { id: "a" })).toEqual([{ id: "a", doc: { n: 1, list: ["x"] }, at }]);
  });

  it("inside a transaction it is part of it: rolled back with it, committed with it", async () => {
    await expect(
      first.db.transaction(async (tx) => {
        await insertProbe(tx, { id: "rolled", doc: null, at });
        expect(await probeById(tx, { id: "rolled" })).toHaveLength(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await probeById(first.db, { id: "rolled" })).toEqual([]);
    await first.db.transaction(async (tx) => {
      await insertProbe(tx, { id: "kept", doc: null, at });
    });
    expect(await probeById(first.db, { id: "kept" })).toHaveLength(1);
  });

  it("runs on the handle it is given: another database sees only its own rows", async () => {
    await insertProbe(second.db, { id: "elsewhere", doc: jsonOrNull("text"), at });
    expect(await probeById(second.db, { id: "elsewhere" })).toEqual([{ id: "elsewhere", doc: "text", at }]);
    expect(await probeById(first.db, { id: "elsewhere" })).toEqual([]);
    expect(await probeById(second.db, { id: "a" })).toEqual([]);
  });
});

/**
 * On PGlite every statement is a named prepared statement of its database (db/pglite-statements.ts):
 * parsed and planned once, kept up to a bound, and prepared again when its table changed.
 */
describe.runIf(testDbKind() === "pglite")("PGlite's prepared statements", () => {
  const preparedNames = async (handle: DbHandle) => rowsOf<{ name: string }>(await handle.db.execute(sql`select name from pg_prepared_statements where name like 'cs%\_%'`)).map((r) => r.name);

  it("prepares a statement once and runs it again by name", async () => {
    for (const id of ["once-1", "once-2", "once-3"]) await insertProbe(first.db, { id, doc: null, at });
    const inserts = rowsOf<{ name: string }>(await first.db.execute(sql`select name from pg_prepared_statements where statement like 'insert into "prepared_probe"%'`));
    expect(inserts).toHaveLength(1);
    expect(inserts[0]?.name).toMatch(/^cs\d+_\d+$/);
    expect(await probeById(first.db, { id: "once-3" })).toHaveLength(1);
  });

  it(`keeps at most ${MAX_PREPARED} statements, closing the least recently used`, async () => {
    const handle = await createTestDb();
    try {
      for (let i = 0; i < MAX_PREPARED + 20; i++) await handle.db.execute(sql.raw(`select ${i} as n`));
      const names = await preparedNames(handle);
      expect(names.length).toBeLessThanOrEqual(MAX_PREPARED);
      expect(names.length).toBeGreaterThan(MAX_PREPARED - 5);
      // The first ones were closed; a closed one is prepared again when used.
      expect(rowsOf<{ n: number }>(await handle.db.execute(sql.raw("select 0 as n")))).toEqual([{ n: 0 }]);
    } finally {
      await handle.close();
    }
  });

  it("a failing statement fails with the database's error and its transaction rolls back; the statement still runs afterwards", async () => {
    const failed = await first.db
      .transaction(async (tx) => {
        await insertProbe(tx, { id: "dup-new", doc: null, at });
        await insertProbe(tx, { id: "a", doc: null, at });
      })
      .catch((error: unknown) => error as { cause?: { code?: string } });
    expect(failed?.cause?.code).toBe("23505");
    expect(await probeById(first.db, { id: "dup-new" })).toEqual([]);
    await insertProbe(first.db, { id: "dup-new", doc: null, at });
    expect(await probeById(first.db, { id: "dup-new" })).toHaveLength(1);
  });

  it("a transaction whose failed statement was caught is rolled back at its end and says so; a savepoint's failure is rolled back to it", async () => {
    const caught = first.db.transaction(async (tx) => {
      await insertProbe(tx, { id: "caught-new", doc: null, at });
      await insertProbe(tx, { id: "a", doc: null, at }).catch(() => "ignored");
    });
    await expect(caught).rejects.toThrow("rolled back");
    expect(await probeById(first.db, { id: "caught-new" })).toEqual([]);
    await first.db.transaction(async (tx) => {
      await insertProbe(tx, { id: "outer", doc: null, at });
      await tx.transaction(async (inner) => insertProbe(inner, { id: "a", doc: null, at })).catch(() => "rolled back to the savepoint");
      await insertProbe(tx, { id: "after-savepoint", doc: null, at });
    });
    expect(await probeById(first.db, { id: "outer" })).toHaveLength(1);
    expect(await probeById(first.db, { id: "after-savepoint" })).toHaveLength(1);
  });

  it("a statement outside a transaction waits for it to end and sees what it committed", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const order: string[] = [];
    let outside: Promise<unknown[]> = Promise.resolve([]);
    let begun = () => {};
    const inside = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const transaction = first.db.transaction(async (tx) => {
      await insertProbe(tx, { id: "while-held", doc: null, at });
      // Sent on the database itself while this transaction holds it.
      outside = probeById(first.db, { id: "while-held" }).then((rows) => {
        order.push("outside");
        return rows;
      });
      begun();
      await held;
      order.push("committing");
    });
    await inside;
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    release();
    await transaction;
    expect(await outside).toHaveLength(1);
    expect(order).toEqual(["committing", "outside"]);
  });

  it("a statement whose table gained a column is prepared again and returns the new column", async () => {
    const handle = await createTestDb();
    try {
      await handle.db.execute(sql`create table altered_probe (id text primary key)`);
      await handle.db.execute(sql`insert into altered_probe values ('x')`);
      const all = () => handle.db.execute(sql`select * from altered_probe`).then((r) => rowsOf<Record<string, unknown>>(r));
      expect(await all()).toEqual([{ id: "x" }]);
      await handle.db.execute(sql`alter table altered_probe add column extra int default 7`);
      expect(await all()).toEqual([{ id: "x", extra: 7 }]);
      // The statement prepared before the change is closed, not kept beside its successor.
      await handle.db.execute(sql`select 1`);
      expect(rowsOf(await handle.db.execute(sql`select name from pg_prepared_statements where statement = 'select * from altered_probe'`))).toHaveLength(1);
    } finally {
      await handle.close();
    }
  });
});

describe.runIf(testDbKind() === "pglite")("PGlite's prepared statements read replies as PGlite does", () => {
  const cases: Array<[string, unknown[]]> = [
    ["select $1::int as i, $2::bigint as big, $3::numeric as num, $4::bool as b, $5::text as t, null::text as nothing", [7, "9007199254740993", "1.50", true, "héllo ✓"]],
    ["select $1::jsonb as doc, $2::json as plain, $3::bytea as bytes, $4::timestamptz as at, $5::text[] as list", [JSON.stringify({ a: [1, "x"] }), JSON.stringify([1, 2]), new Uint8Array([0, 1, 254, 255]), "2026-12-06T10:00:00.000Z", ["a", "b,c", null]]],
    ["select g as n, g::text as s from generate_series(1, $1::int) g", [3]],
    // About 3 MB: PGlite hands the reply over in many pieces.
    ["select g, repeat('x', 1000) || $1 as t from generate_series(1, 3000) g", ["é"]],
    ["select 1 as same, 2 as same", []],
    ["insert into prepared_probe (id, doc) values ($1, $2), ($3, null) returning id", ["reply-1", JSON.stringify({ k: 1 }), "reply-2"]],
    ["update prepared_probe set doc = $1 where id like 'reply-%'", [JSON.stringify({ k: 2 })]],
    ["delete from prepared_probe where id = $1", ["reply-2"]],
    ["drop table if exists no_such_table", []],
  ];

  it("the same rows, fields, command and counts (or the same error) as PGlite's own query, in both row modes, a notice included", async () => {
    const own = first.pglite as NonNullable<DbHandle["pglite"]>;
    // The handle drizzle runs on (every statement prepared) and PGlite itself, each in a transaction rolled back.
    const prepared = (first.db as unknown as { $client: typeof own }).$client;
    const run = (client: typeof own, text: string, params: unknown[], rowMode: "object" | "array") =>
      client
        .transaction(async (tx) => {
          const result = await tx.query(text, params, { rowMode });
          await tx.rollback();
          return { result };
        })
        .catch((error: { code?: string; message?: string }) => ({ error: { code: error.code, message: error.message } }));
    for (const [text, params] of cases) {
      for (const rowMode of ["object", "array"] as const) {
        const through = await run(prepared, text, params, rowMode);
        expect({ text, rowMode, ...through }).toEqual({ text, rowMode, ...(await run(own, text, params, rowMode)) });
        expect(through).toHaveProperty("result");
      }
    }
  });
});
