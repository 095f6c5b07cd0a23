import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { fakeModelAgent, type TFakeModel, httpError, startFakeModel, textReply, toolReply } from "./fake-openai";
import { decide, invoke, invokeApproval, LiveClient, ok200, type TWireFrame } from "./helpers";
import { eventsOf, modelTurns, replayFrames, steer, steeringRows, stepResult } from "./runtime-helpers";
import { trpcGet, trpcPost } from "./security-helpers";

/**
 * Issue 16 point 5: the one steering path re-checks every queued message's assertion right
 * before the model request and before each retry of it, omits a revoked message without
 * touching the others, and settles each message exactly once (one stored `steer.committed`,
 * `steer.rejected` or `steer.cancelled`, which is what fires `onQueueSettled`).
 */

let fake: TFakeModel;
let app: TTestApp;
let member: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  fake = await startFakeModel();
  app = await startTestApp({ agents: [fakeModelAgent(fake.url, "fake-steer-retry", { maxRetries: 1 }, { description: "A model agent whose endpoint gets one retry.", maxTurns: 4 })] });
  member = await app.user("member");
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

/** Sends a steering frame on the socket and returns the id of the queued message. */
async function steerOver(client: LiveClient, responseId: string, text: string): Promise<string> {
  const before = client.frames.filter((f) => f.type === "steer.queued").length;
  client.send({ type: "response.steer", responseId, text });
  const queued = await client.waitForCount((f) => f.type === "steer.queued", before + 1);
  return queued.at(-1)?.steerId as string;
}

/** Every steering frame of a settled response, as `[type, steerId]`; asserts one settlement per message. */
async function settlements(env: { id: string; sessionId: string }): Promise<Array<[string, string]>> {
  const frames: TWireFrame[] = await replayFrames(app, member.apiKey, env);
  const steering = frames.filter((f) => f.type.startsWith("steer.")).map((f): [string, string] => [f.type, f.steerId as string]);
  const settled = steering.filter(([type]) => type !== "steer.queued").map(([, id]) => id);
  expect(new Set(settled).size, "one settlement per message").toBe(settled.length);
  // The trajectory (what the audit export reads) holds the same single settlement per message.
  const stored = (await eventsOf(app, env.id, "steer.rejected")).concat(await eventsOf(app, env.id, "steer.committed"), await eventsOf(app, env.id, "steer.cancelled"));
  expect(stored.map((e) => (e.data as { steerId: string }).steerId).sort()).toEqual([...settled].sort());
  return steering;
}

describe(`one guarded steering path (${testDbKind()})`, () => {
  it("a message whose credential is revoked between enqueue and dispatch is omitted; the others are delivered, each settled once", async () => {
    const created = await trpcPost(app, { key: operator.apiKey }, "admin.createApiKey", { name: "steering" });
    const secondKey = (created.body as { result: { data: { apiKey: string } } }).result.data.apiKey;
    const { env, approval } = await invokeApproval(app, member.apiKey, "true", { followedBy: [{ text: "done" }] });

    const revocable = await LiveClient.open(app, secondKey);
    const staying = await LiveClient.open(app, operator.apiKey);
    const viaHttp = await steer(app, member.apiKey, env.id, "from http");
    expect(viaHttp.status).toBe(202);
    const fromHttp = ((await viaHttp.json()) as { id: string }).id;
    const fromRevocable = await steerOver(revocable, env.id, "from a key that gets revoked");
    const fromStaying = await steerOver(staying, env.id, "from a socket that stays");

    // The key is revoked through the API; the server closes the socket that steered with it.
    const listed = await trpcGet(app, { key: operator.apiKey }, "admin.apiKeys");
    const keys = (listed.body as { result: { data: Array<{ id: string; userId: string; name: string }> } }).result.data;
    const keyId = keys.find((k) => k.userId === operator.userId && k.name === "steering")?.id;
    expect((await trpcPost(app, { key: operator.apiKey }, "admin.revokeApiKey", { keyId })).status).toBe(200);
    expect((await revocable.closed).code).toBe(4401);
    expect((await steeringRows(app, env.id)).map((r) => r.status)).toEqual(["queued", "queued", "queued"]);

    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
    const rows = await steeringRows(app, env.id);
    expect(rows.map((r) => [r.id, r.status, r.committedTurn])).toEqual([
      [fromHttp, "committed", 1],
      [fromRevocable, "rejected", null],
      [fromStaying, "committed", 1],
    ]);
    expect(rows[1]?.reason).toMatch(/revoked/);
    expect((await stepResult<{ steering: string[] }>(app, env.id, "model:1"))?.steering).toEqual(["from http", "from a socket that stays"]);
    expect((await modelTurns(app, env.id)).map((t) => t.steeringMessages)).toEqual([0, 2]);
    expect(await settlements(env)).toEqual([
      ["steer.queued", fromHttp],
      ["steer.queued", fromRevocable],
      ["steer.queued", fromStaying],
      ["steer.rejected", fromRevocable],
      ["steer.committed", fromHttp],
      ["steer.committed", fromStaying],
    ]);
    staying.close();
  });

  it("a message revoked before the model request is retried is left out of the retry; the other one reaches the model and commits", async () => {
    fake.reply(toolReply([{ name: "exec", arguments: JSON.stringify({ command: "true" }) }]));
    const env = await invoke(app, member.apiKey, "Run true, then answer.", { agent: "fake-steer-retry" });
    expect(env.status).toBe("requires_action");
    const leaving = await LiveClient.open(app, member.apiKey, { sessionId: env.sessionId });
    const staying = await LiveClient.open(app, member.apiKey, { sessionId: env.sessionId });
    const fromLeaving = await steerOver(leaving, env.id, "from a socket that goes away");
    const fromStaying = await steerOver(staying, env.id, "from a socket that stays");

    // The first request of turn 1 carries both messages; while it fails, the first socket goes away.
    fake.reply(async (res, req) => {
      leaving.ws.close(1000, "bye");
      await leaving.closed;
      await httpError(500, "warming up")(res, req);
    }, textReply(["done"]));
    const mark = fake.requests.length;
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("done");

    const userTexts = (i: number) => (fake.requests[mark + i]?.body.messages ?? []).filter((m) => m.role === "user").map((m) => m.content);
    expect(fake.requests.length - mark).toBe(2);
    expect(userTexts(0)).toEqual(["Run true, then answer.", "from a socket that goes away", "from a socket that stays"]);
    // The retry was checked again: the revoked message is gone, the other one is still there.
    expect(userTexts(1)).toEqual(["Run true, then answer.", "from a socket that stays"]);

    const rows = await steeringRows(app, env.id);
    expect(rows.map((r) => [r.id, r.status, r.committedTurn])).toEqual([
      [fromLeaving, "rejected", null],
      [fromStaying, "committed", 1],
    ]);
    expect(rows[0]?.reason).toMatch(/revoked/);
    expect((await stepResult<{ steering: string[] }>(app, env.id, "model:1"))?.steering).toEqual(["from a socket that stays"]);
    expect(await settlements(env)).toEqual([
      ["steer.queued", fromLeaving],
      ["steer.queued", fromStaying],
      ["steer.rejected", fromLeaving],
      ["steer.committed", fromStaying],
    ]);
    // The socket that stayed saw each outcome once.
    await staying.waitFor((f) => f.type === "response.completed" && f.status === "completed");
    expect(staying.of(env.id).filter((f) => f.type === "steer.rejected" || f.type === "steer.committed").map((f) => [f.type, f.steerId])).toEqual([
      ["steer.rejected", fromLeaving],
      ["steer.committed", fromStaying],
    ]);
    staying.close();
  });
});
