import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DbHandle, rowsOf } from "../../db/client";
import { createTestDb, testDbKind } from "../../db/testing";

/**
 * Transactions on PostgreSQL send their BEGIN with the first statements instead of waiting for it
 * (db/client.ts). What a transaction promises must still hold, on both databases: its writes are
 * invisible to others until it commits, a failure anywhere (even one the caller caught) commits
 * nothing (PostgreSQL reports the statement's error; PGlite that the transaction was rolled
 * back), and a failed or thrown transaction gives its connection back.
 */
let handle: DbHandle;

beforeAll(async () => {
  handle = await createTestDb();
  await handle.db.execute(sql`create table tx_probe (x int not null, unique (x))`);
});
afterAll(async () => {
  await handle?.close();
});

const count = async () => rowsOf<{ n: number }>(await handle.db.execute(sql`select count(*)::int as n from tx_probe`))[0]?.n;
const clear = () => handle.db.execute(sql`delete from tx_probe`);

describe(`transactions (${testDbKind()})`, () => {
  it("the first statement already runs inside the transaction: others see nothing before the commit", async () => {
    await clear();
    let seenInside: number | undefined = -1;
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into tx_probe values (1)`);
      // PGlite has one connection: a read from outside would wait for this transaction to end.
      if (handle.kind === "postgres") seenInside = await count();
      else seenInside = 0;
      expect(rowsOf<{ n: number }>(await tx.execute(sql`select count(*)::int as n from tx_probe`))[0]?.n).toBe(1);
    });
    expect(seenInside).toBe(0);
    expect(await count()).toBe(1);
  });

  it("a thrown error rolls back every write of the transaction", async () => {
    await clear();
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (1)`);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await count()).toBe(0);
  });

  it("a failed statement fails the transaction even when the caller caught its error; nothing is committed", async () => {
    await clear();
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (1)`);
        await tx.execute(sql`insert into tx_probe values (1)`).catch(() => "ignored");
        return "done";
      }),
    ).rejects.toThrow(/duplicate key|rolled back/);
    expect(await count()).toBe(0);
  });

  it("a statement left running when the callback returns is part of the transaction; its failure fails it", async () => {
    await clear();
    let pending: Promise<unknown> | null = null;
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (1)`);
        pending = tx.execute(sql`select 1 / 0`).then(
          () => "ok",
          () => "failed",
        );
        return "done";
      }),
    ).rejects.toThrow(/division by zero|rolled back/);
    expect(await pending).toBe("failed");
    expect(await count()).toBe(0);
  });

  it("many concurrent transactions, some failing, all end and give their connections back", async () => {
    await clear();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        handle.db.transaction(async (tx) => {
          await tx.execute(sql`insert into tx_probe values (${i})`);
          if (i % 3 === 0) throw new Error(`fail ${i}`);
          if (i % 3 === 1) await tx.execute(sql`select 1 / 0`);
          return i;
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled").map((o) => (o as PromiseFulfilledResult<number>).value)).toEqual(
      Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 === 2),
    );
    expect(await count()).toBe(20);
    // Every connection is usable again: more transactions than the pool holds still run.
    const again = await Promise.all(Array.from({ length: 40 }, (_, i) => handle.db.transaction(async (tx) => rowsOf<{ v: number }>(await tx.execute(sql`select ${i}::int as v`))[0]?.v)));
    expect(again).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });
});
