import { sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type DbHandle, rowsOf } from "../../db/client";
import { createTestDb, testDbKind } from "../../db/testing";
import { PEER_CHANNEL } from "../../server/host/bus";
import { transact } from "../../server/host/transact";

/**
 * transact() sends the NOTIFY that tells peers with the COMMIT (one wait for the database). A
 * NOTIFY that fails aborts the transaction, and PostgreSQL then answers the COMMIT with a rollback
 * rather than an error: transact must notice, throw, and publish nothing.
 */
let handle: DbHandle;

beforeAll(async () => {
  handle = await createTestDb();
  await handle.db.execute(sql`create table transact_probe (x int not null)`);
});
afterAll(async () => {
  await handle?.close();
});

const probeCount = async () => rowsOf<{ n: number }>(await handle.db.execute(sql`select count(*)::int as n from transact_probe`))[0]?.n;

function bus(payload: string) {
  return { peerPayloads: () => [payload], deliverLocally: vi.fn() };
}

describe(`transact: peers are told with the commit (${testDbKind()})`, () => {
  it("a NOTIFY that fails rolls everything back: transact throws and nothing is published", async () => {
    const b = bus("x".repeat(9000)); // over PostgreSQL's 8000-byte payload limit
    await expect(
      transact({ db: handle.db, bus: b as never }, async (tx, _emit, announce) => {
        await tx.execute(sql`insert into transact_probe values (1)`);
        announce({ k: "wake", responseId: "r_probe", reason: "cancel" });
        return "done";
      }),
    ).rejects.toThrow();
    expect(b.deliverLocally).not.toHaveBeenCalled();
    expect(await probeCount()).toBe(0);
  });

  it("a NOTIFY that succeeds commits with the writes, reaches a listener, and the batch is published once", async () => {
    const heard: string[] = [];
    const listener = handle.kind === "postgres" && handle.url ? postgres(handle.url, { max: 1, onnotice: () => {} }) : null;
    if (listener) await listener.listen(PEER_CHANNEL, (payload) => heard.push(payload));
    try {
      const b = bus("hello-peers");
      const value = await transact({ db: handle.db, bus: b as never }, async (tx, _emit, announce) => {
        await tx.execute(sql`insert into transact_probe values (2)`);
        announce({ k: "wake", responseId: "r_probe", reason: "cancel" });
        return "done";
      });
      expect(value).toBe("done");
      expect(b.deliverLocally).toHaveBeenCalledTimes(1);
      expect(await probeCount()).toBe(1);
      if (listener) {
        // A failure bound only (the NOTIFY arrives when PostgreSQL delivers it).
        const deadline = Date.now() + 30_000;
        while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(heard).toEqual(["hello-peers"]);
      }
    } finally {
      await listener?.end({ timeout: 1 });
    }
  });
});
