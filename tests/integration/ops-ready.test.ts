import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp } from "../../server/testing/test-app";
import { waitUntil } from "./helpers";

/** The probe's bound where a hanging database is the subject; elsewhere it is generous (a loaded machine must not trip it). */
const TIMEOUT_MS = 400;
const GENEROUS_MS = 30_000;

type TNotReady = { detail: string; code: string; reason: string };

let app: TTestApp;

beforeAll(async () => {
  app = await startTestApp({ readyTimeoutMs: GENEROUS_MS });
});
afterAll(async () => {
  await app?.close();
});

describe(`GET /v1/readyz (${testDbKind()})`, () => {
  it("200 with a small status body when the database answers and every migration is applied; public like /v1/healthz", async () => {
    const res = await app.api("/v1/readyz");
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["database", "migrations", "status"]);
    expect(body.status).toBe("ready");
    expect(body.database).toBe(testDbKind());
    expect(body.migrations).toBeGreaterThan(10);
    expect((await app.api("/v1/healthz")).status).toBe(200);
  });

  it("503 database_timeout within the timeout when the database hangs, and 200 again once it answers", async () => {
    const hung = await startTestApp({ readyTimeoutMs: TIMEOUT_MS });
    try {
      await hangsThenAnswers(hung);
    } finally {
      await hung.close();
    }
  }, 180_000);

  /** The database hangs for the probe until released: only the probe's timeout can answer it. */
  async function hangsThenAnswers(app: TTestApp) {
    // The database hangs for the probe: a transaction holds the migrations table locked (PGlite: its one connection).
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = app.dbHandle.db.transaction(async (tx) => {
      await tx.execute(sql`lock table drizzle.__drizzle_migrations in access exclusive mode`);
      locked();
      await released;
    });
    try {
      await isLocked;
      // The lock is held until after this answer: it can only be the probe's own timeout.
      const res = await app.api("/v1/readyz");
      expect(res.status).toBe(503);
      const body = (await res.json()) as TNotReady;
      expect(body).toEqual({ detail: `The database did not answer within ${TIMEOUT_MS} ms.`, code: "capacity", reason: "database_timeout" });
      // Liveness does not touch the database.
      expect((await app.api("/v1/healthz")).status).toBe(200);
    } finally {
      release();
      await holder;
    }
    // Once it answers, a probe is 200 again (polled: with a 400 ms bound a loaded machine may need a second try).
    const again = await waitUntil(async () => {
      const res = await app.api("/v1/readyz");
      return res.status === 200 ? res : null;
    }, 30_000, "readyz 200 again");
    expect(((await again.json()) as { status: string }).status).toBe("ready");
  }

  it("503 database_unreachable, naming the reason, when the database is gone; /v1/healthz stays 200", async () => {
    const gone = await startTestApp({ readyTimeoutMs: GENEROUS_MS });
    try {
      expect((await gone.api("/v1/readyz")).status).toBe(200);
      await gone.dbHandle.close();
      const res = await gone.api("/v1/readyz");
      expect(res.status).toBe(503);
      const body = (await res.json()) as TNotReady;
      expect(Object.keys(body).sort()).toEqual(["code", "detail", "reason"]);
      expect(body.reason).toBe("database_unreachable");
      expect(body.code).toBe("capacity");
      expect(body.detail).toMatch(/^The database is not reachable: \S/);
      expect((await gone.api("/v1/healthz")).status).toBe(200);
    } finally {
      await gone.close().catch(() => {});
    }
  });
});
