import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvents } from "../../db/repositories/events";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invoke } from "./helpers";

let app: TTestApp;
let member: TTestUser;
beforeAll(async () => {
  app = await startTestApp();
  member = await app.user("member");
});
afterAll(async () => {
  await app?.close();
});

type TGet = { trajectoryTotal: number; trajectoryTruncated: boolean; trajectory: Array<{ seq: number; type: string }> };
const get = async (responseId: string): Promise<TGet> => {
  const res = await fetch(`${app.url}/api/trpc/responses.get?input=${encodeURIComponent(JSON.stringify({ responseId }))}`, { headers: { authorization: `Bearer ${member.apiKey}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { data: TGet } }).result.data;
};

describe(`responses.get returns a bounded trajectory (${testDbKind()})`, () => {
  it("a short trajectory comes whole, in order", async () => {
    const env = await invoke(app, member.apiKey, "hello");
    const got = await get(env.id);
    expect(got.trajectoryTruncated).toBe(false);
    expect(got.trajectory.length).toBe(got.trajectoryTotal);
    expect(got.trajectory.map((e) => e.seq)).toEqual(got.trajectory.map((_, i) => i));
  });

  it("a long one gives its newest 1,000 events in order, the total and the truncation", async () => {
    const env = await invoke(app, member.apiKey, "hello");
    const before = (await get(env.id)).trajectoryTotal;
    await app.deps.db.transaction((tx) => appendEvents(tx, env.id, Array.from({ length: 1500 }, (_, i) => ({ type: "bench.note", data: { i }, frame: false }))));
    const got = await get(env.id);
    // The host may still add the run's own closing events around ours: count from what came back.
    expect(got.trajectoryTotal).toBeGreaterThanOrEqual(before + 1500);
    expect(got.trajectoryTruncated).toBe(true);
    expect(got.trajectory).toHaveLength(1000);
    expect(got.trajectory.map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => got.trajectoryTotal - 1000 + i));
    expect(got.trajectory.filter((e) => e.type === "bench.note").length).toBeGreaterThanOrEqual(990);
  });
});
