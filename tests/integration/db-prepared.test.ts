import { eq, sql } from "drizzle-orm";
import { jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DbHandle, rowsOf } from "../../db/client";
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
