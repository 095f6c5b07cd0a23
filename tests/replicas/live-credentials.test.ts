import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { LiveClient } from "../integration/helpers";
import { within } from "../integration/stream-helpers";
import { startCluster, type TCluster } from "./cluster";

/**
 * Credential changes reach every replica: a key revoked through one replica ends the sockets opened
 * with it on another by its NOTIFY (long before that replica's own periodic re-check). A session id handed out by a bare connect on one
 * replica can be continued on another (the id is bound to its user with the shared secret key).
 */

let cluster: TCluster;
beforeAll(async () => {
  cluster = await startCluster(2);
});
afterAll(async () => cluster?.close());

const url = (i: number) => cluster.replicas[i]?.url as string;

async function trpc<T>(i: number, key: string, path: string, input: unknown): Promise<T> {
  const res = await fetch(`${url(i)}/api/trpc/${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(input) });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

describe("live connections across replicas", () => {
  test("a key revoked through replica 0 closes the socket opened with it on replica 1 (by its NOTIFY); the user's other key stays", async () => {
    const second = await trpc<{ id: string; apiKey: string }>(0, cluster.key, "admin.createApiKey", { name: "to revoke" });
    const doomed = await LiveClient.open({ url: url(1) }, second.apiKey);
    const stays = await LiveClient.open({ url: url(1) }, cluster.key);
    await trpc(0, cluster.key, "admin.revokeApiKey", { keyId: second.id });
    // Well before replica 1's periodic re-check (30 s): only the NOTIFY from replica 0 closes it this soon.
    expect((await within(doomed.closed, 15_000, "the close on the other replica")).code).toBe(4401);
    expect(stays.isOpen).toBe(true);
    stays.close();
  });

  test("a session id handed out by a bare connect on replica 0 continues on replica 1, where its first run lands in it", async () => {
    const first = await LiveClient.open({ url: url(0) }, cluster.key);
    first.close();
    const again = await LiveClient.open({ url: url(1) }, cluster.key, { sessionId: first.sessionId });
    expect(again.sessionId).toBe(first.sessionId);
    again.send({ type: "response.create", input: { script: [{ text: "here" }] }, requestId: "r" });
    const done = await again.waitFor((f) => f.type === "response.completed" && f.requestId === "r");
    expect(done).toMatchObject({ status: "completed", sessionId: first.sessionId });
    again.close();
  });
});
