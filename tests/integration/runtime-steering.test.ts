import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, expectError, getResponse, invoke, invokeApproval, LiveClient, ok200, script, waitUntil } from "./helpers";
import { modelTurns, replayFrames, settledEnvelope, steer, steeringRows, stepResult, trpcPost, waitForPid } from "./runtime-helpers";

let app: TTestApp;
let member: TTestUser;
let other: TTestUser;
let auditor: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ expirySweepMs: 200 });
  member = await app.user("member");
  other = await app.user("member");
  auditor = await app.user("auditor");
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

type TSteerReply = { id: string; responseId: string; status: string; sequence: number };

async function steer202(key: string, responseId: string, text: string): Promise<TSteerReply> {
  const res = await steer(app, key, responseId, text);
  const body = await res.text();
  expect(res.status, body).toBe(202);
  return JSON.parse(body) as TSteerReply;
}

describe(`steering over HTTP (${testDbKind()})`, () => {
  it("a message steered while suspended is claimed at the next model turn and committed", async () => {
    const { env, approval } = await invokeApproval(app, member.apiKey, "echo hi", { followedBy: [{ text: "done" }] });
    const queued = await steer202(member.apiKey, env.id, "  please also say goodbye  ");
    expect(Object.keys(queued).sort()).toEqual(["id", "responseId", "sequence", "status"]);
    expect(queued).toMatchObject({ responseId: env.id, status: "queued" });
    expect(queued.id).toMatch(/^steer_/);
    expect(Number.isInteger(queued.sequence) && queued.sequence > 0).toBe(true);

    // Queued, not yet used: the run is still waiting for its approval.
    const [before] = await steeringRows(app, env.id);
    expect(before).toMatchObject({ id: queued.id, status: "queued", authorityKind: "run", via: "http", text: "please also say goodbye", committedTurn: null });

    const done = await ok200(await decide(app, operator.apiKey, approval.id, "approve"));
    expect(done.status).toBe("completed");

    const turns = await modelTurns(app, env.id);
    expect(turns.map((t) => [t.turn, t.steeringMessages])).toEqual([
      [0, 0],
      [1, 1],
    ]);
    // The model saw the message in the conversation of turn 1 (the stored turn carries it for replay).
    expect((await stepResult<{ steering: string[] }>(app, env.id, "model:1"))?.steering).toEqual(["please also say goodbye"]);

    const [row] = await steeringRows(app, env.id);
    expect(row).toMatchObject({ id: queued.id, status: "committed", committedTurn: 1, reason: null });
    expect(row?.settledAt).toBeInstanceOf(Date);

    const frames = await replayFrames(app, member.apiKey, env);
    const steerFrames = frames.filter((f) => f.type.startsWith("steer."));
    expect(steerFrames.map((f) => f.type)).toEqual(["steer.queued", "steer.committed"]);
    expect(steerFrames[0]).toMatchObject({ sequence: queued.sequence, steerId: queued.id, authorityKind: "run" });
    expect(steerFrames[1]).toMatchObject({ steerId: queued.id, turn: 1 });
    // The commit comes after the approval resolved and before the final text.
    const at = (type: string) => frames.findIndex((f) => f.type === type);
    expect(at("approval.resolved")).toBeLessThan(at("steer.committed"));
    expect(at("steer.committed")).toBeLessThan(frames.findLastIndex((f) => f.type === "response.text.delta"));
  });

  it("a message steered while an approved command runs (in_progress) is used at the turn after it", async () => {
    const { env, approval, cwd } = await invokeApproval(app, member.apiKey, "echo $$ > pid.txt; sleep 1", { followedBy: [{ text: "done" }] });
    const decided = decide(app, operator.apiKey, approval.id, "approve");
    await waitForPid(cwd);
    expect((await ok200(await getResponse(app, member.apiKey, env.id, env.sessionId))).status).toBe("in_progress");
    const queued = await steer202(member.apiKey, env.id, "while it runs");
    expect((await ok200(await decided)).status).toBe("completed");
    expect((await steeringRows(app, env.id)).map((r) => [r.id, r.status, r.committedTurn])).toEqual([[queued.id, "committed", 1]]);
    expect((await modelTurns(app, env.id)).map((t) => t.steeringMessages)).toEqual([0, 1]);
  });

  it("several messages are used in order at one turn", async () => {
    const { env, approval } = await invokeApproval(app, member.apiKey, "true");
    const a = await steer202(member.apiKey, env.id, "first");
    const b = await steer202(member.apiKey, env.id, "second");
    expect(b.sequence).toBeGreaterThan(a.sequence);
    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
    expect((await stepResult<{ steering: string[] }>(app, env.id, "model:1"))?.steering).toEqual(["first", "second"]);
    expect((await steeringRows(app, env.id)).map((r) => [r.text, r.status, r.committedTurn])).toEqual([
      ["first", "committed", 1],
      ["second", "committed", 1],
    ]);
  });

  it("HTTP steering input: empty, non-string, unknown fields or too-long text 400; an unknown response 404; no key 401; an operator may steer anyone's run", async () => {
    const { env: live, approval } = await invokeApproval(app, member.apiKey, "true");
    await expectError(await steer(app, member.apiKey, live.id, ""), 400, "invalid_request");
    await expectError(await steer(app, member.apiKey, live.id, 42), 400, "invalid_request");
    await expectError(await app.api(`/v1/responses/${live.id}/steer`, { key: member.apiKey, body: { text: "x", extra: 1 } }), 400, "invalid_request");
    await expectError(await steer(app, member.apiKey, live.id, "x".repeat(10_001)), 400, "invalid_request");
    await expectError(await steer(app, member.apiKey, "resp_does_not_exist", "nobody"), 404, "not_found");
    await expectError(await steer(app, "", live.id, "anonymous"), 401, "unauthenticated");
    // An operator may steer anyone's run.
    await steer202(operator.apiKey, live.id, "from the operator");
    expect(await steeringRows(app, live.id)).toHaveLength(1);

    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
    expect((await steeringRows(app, live.id)).map((r) => [r.status, r.userId])).toEqual([["committed", operator.userId]]);
  });

  it("a message still queued when the response ends without another model turn is cancelled", async () => {
    // The script ends with the exec call: after the tool there is no further model turn.
    const env = await invoke(app, member.apiKey, script([execTurn("true")]));
    expect(env.status).toBe("requires_action");
    const queued = await steer202(member.apiKey, env.id, "never used");
    const done = await ok200(await decide(app, operator.apiKey, env.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    const [row] = await steeringRows(app, env.id);
    expect(row).toMatchObject({ id: queued.id, status: "cancelled", committedTurn: null });
    expect(row?.reason).toMatch(/settled/);
    const frames = await replayFrames(app, member.apiKey, env);
    expect(frames.filter((f) => f.type.startsWith("steer.")).map((f) => f.type)).toEqual(["steer.queued", "steer.cancelled"]);
    // steer.cancelled comes before the terminal frame.
    expect(frames.findIndex((f) => f.type === "steer.cancelled")).toBeLessThan(frames.length - 1);
    expect(frames.at(-1)).toMatchObject({ type: "response.completed", status: "completed" });
    expect((await modelTurns(app, env.id)).every((t) => t.steeringMessages === 0)).toBe(true);
  });

  it("a queued message is cancelled when the response is cancelled, denied or expires while suspended", async () => {
    for (const settle of ["cancel", "deny", "expire"] as const) {
      const { env, approval } = await invokeApproval(app, member.apiKey, "true", settle === "expire" ? { approvalTtlMs: 1000 } : {});
      const queued = await steer202(member.apiKey, env.id, `then ${settle}`);
      if (settle === "cancel") expect((await ok200(await app.api(`/v1/responses/${env.id}/cancel`, { key: member.apiKey, body: {} }))).status).toBe("cancelled");
      if (settle === "deny") expect((await decide(app, operator.apiKey, approval.id, "deny")).status).toBe(200);
      const final = await settledEnvelope(app, member.apiKey, env);
      expect(final.status).toBe(settle === "cancel" ? "cancelled" : "denied");
      const [row] = await steeringRows(app, env.id);
      expect(row, settle).toMatchObject({ id: queued.id, status: "cancelled", committedTurn: null });
      const frames = await replayFrames(app, member.apiKey, env);
      expect(
        frames.filter((f) => f.type.startsWith("steer.")).map((f) => f.type),
        settle,
      ).toEqual(["steer.queued", "steer.cancelled"]);
      await expectError(await steer(app, member.apiKey, env.id, "after the end"), 409, "conflict");
    }
  });

});

/** HTTP status of each refusal code (tRPC answers the same statuses). */
const STATUS: Record<string, number> = { invalid_request: 400, forbidden: 403, not_found: 404, conflict: 409 };

/**
 * One steering message over each transport: "queued", or the refusal's code. Over HTTP the error
 * body's exact shape is checked, over the socket a refusal's frame names the response. A socket that
 * queued a message stays open (in `open`) so that its source-bound message is not revoked.
 */
const transports: Array<{ via: string; send: (key: string, responseId: string, text: string, open: LiveClient[]) => Promise<string> }> = [
  {
    via: "http",
    send: async (key, responseId, text) => {
      const res = await steer(app, key, responseId, text);
      if (res.status === 202) return ((await res.json()) as TSteerReply).status;
      const { code } = (await res.clone().json()) as { code: string };
      await expectError(res, STATUS[code] ?? -1, code);
      return code;
    },
  },
  {
    via: "console",
    send: async (key, responseId, text) => {
      const res = await trpcPost(app, key, "responses.steer", { responseId, text });
      if (res.status === 200) return (res.body.result?.data as { status?: string } | undefined)?.status ?? "no status";
      return Object.keys(STATUS).find((code) => STATUS[code] === res.status) ?? `HTTP ${res.status}`;
    },
  },
  {
    via: "websocket",
    send: async (key, responseId, text, open) => {
      const client = await LiveClient.open(app, key);
      client.send({ type: "response.steer", responseId, text });
      const answer = await client.waitFor((f) => f.type === "error" || (f.type === "steer.queued" && f.responseId === responseId));
      if (answer.type === "steer.queued") {
        open.push(client);
        return "queued";
      }
      client.close();
      // A refusal names the response (a frame that fails validation has none to name).
      if (answer.code !== "invalid_request") expect(answer.responseId).toBe(responseId);
      return answer.code as string;
    },
  },
];

describe(`steering refusals are the same on every transport (${testDbKind()})`, () => {
  it.each(transports)("over $via: a finished response 409, empty text 400, someone else's response 404, an auditor 403; the owner's message is queued and committed", async ({ via, send }) => {
    const open: LiveClient[] = [];
    const over = (key: string, responseId: string, text: string) => send(key, responseId, text, open);
    try {
      const finished = await invoke(app, member.apiKey, script([{ text: "hi" }]));
      expect(finished.status).toBe("completed");
      expect(await over(member.apiKey, finished.id, "too late")).toBe("conflict");

      const { env: live, approval } = await invokeApproval(app, member.apiKey, "true");
      expect(await over(member.apiKey, live.id, "   ")).toBe("invalid_request");
      expect(await over(other.apiKey, live.id, "not mine")).toBe("not_found");
      expect(await over(auditor.apiKey, live.id, "read only")).toBe("forbidden");
      expect(await steeringRows(app, live.id)).toEqual([]);

      expect(await over(member.apiKey, live.id, `from ${via}`)).toBe("queued");
      expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
      expect((await steeringRows(app, live.id)).map((r) => [r.via, r.status])).toEqual([[via, "committed"]]);
      expect(await over(member.apiKey, live.id, "late")).toBe("conflict");
    } finally {
      for (const client of open) client.close();
    }
  });
});

describe(`source-bound steering over WebSocket: a steering message racing a revocation (${testDbKind()})`, () => {
  it("a socket that closes before dispatch revokes its message; an open socket's message is committed", async () => {
    const { env, approval } = await invokeApproval(app, member.apiKey, "true", { followedBy: [{ text: "done" }] });
    const leaving = await LiveClient.open(app, member.apiKey, { sessionId: env.sessionId });
    const staying = await LiveClient.open(app, member.apiKey, { sessionId: env.sessionId });

    leaving.send({ type: "response.steer", responseId: env.id, text: "from a socket that goes away" });
    const leavingQueued = await leaving.waitFor((f) => f.type === "steer.queued");
    staying.send({ type: "response.steer", responseId: env.id, text: "from a socket that stays" });
    const stayingQueued = await staying.waitFor((f) => f.type === "steer.queued" && f.steerId !== leavingQueued.steerId);
    expect(leavingQueued).toMatchObject({ responseId: env.id, authorityKind: "source-bound" });

    // Close the first socket cleanly and wait until the server has seen it go.
    leaving.ws.close(1000, "bye");
    await leaving.closed;
    const rowsBefore = await steeringRows(app, env.id);
    expect(rowsBefore.map((r) => [r.id, r.status, r.authorityKind, r.via])).toEqual([
      [leavingQueued.steerId, "queued", "source-bound", "websocket"],
      [stayingQueued.steerId, "queued", "source-bound", "websocket"],
    ]);

    const done = await ok200(await decide(app, operator.apiKey, approval.id, "approve"));
    expect(done.status).toBe("completed");

    const rows = await steeringRows(app, env.id);
    expect(rows.map((r) => [r.id, r.status, r.committedTurn])).toEqual([
      [leavingQueued.steerId, "rejected", null],
      [stayingQueued.steerId, "committed", 1],
    ]);
    expect(rows[0]?.reason).toMatch(/revoked/);
    // The revoked text never reached the model; the other one did.
    expect((await stepResult<{ steering: string[] }>(app, env.id, "model:1"))?.steering).toEqual(["from a socket that stays"]);
    expect((await modelTurns(app, env.id)).map((t) => t.steeringMessages)).toEqual([0, 1]);

    const frames = await replayFrames(app, member.apiKey, env);
    expect(frames.filter((f) => f.type.startsWith("steer.")).map((f) => [f.type, f.steerId])).toEqual([
      ["steer.queued", leavingQueued.steerId],
      ["steer.queued", stayingQueued.steerId],
      ["steer.rejected", leavingQueued.steerId],
      ["steer.committed", stayingQueued.steerId],
    ]);
    // The open socket followed the run to its end and saw both outcomes.
    await staying.waitFor((f) => f.type === "response.completed" && f.status === "completed");
    expect(staying.of(env.id).filter((f) => f.type === "steer.rejected" || f.type === "steer.committed").map((f) => f.type)).toEqual(["steer.rejected", "steer.committed"]);
    staying.close();
  });

  it("a revoked source-bound message alone reaches no model turn", async () => {
    const { env, approval } = await invokeApproval(app, member.apiKey, "true");
    const client = await LiveClient.open(app, member.apiKey, { sessionId: env.sessionId });
    client.send({ type: "response.steer", responseId: env.id, text: "revoked" });
    await client.waitFor((f) => f.type === "steer.queued");
    client.ws.close(1000, "bye");
    await client.closed;
    expect((await ok200(await decide(app, operator.apiKey, approval.id, "approve"))).status).toBe("completed");
    expect((await steeringRows(app, env.id)).map((r) => r.status)).toEqual(["rejected"]);
    expect((await modelTurns(app, env.id)).map((t) => t.steeringMessages)).toEqual([0, 0]);
    expect((await stepResult<{ steering: string[] }>(app, env.id, "model:1"))?.steering).toEqual([]);
  });

  it("steering over the socket that created the run is committed while that socket stays open", async () => {
    const client = await LiveClient.open(app, member.apiKey);
    client.send({ type: "response.create", input: script([execTurn("true"), { text: "done" }]), requestId: "r1" });
    const requested = await client.waitFor((f) => f.type === "approval.requested");
    const responseId = requested.responseId;
    client.send({ type: "response.steer", responseId, text: "same socket" });
    const queued = await client.waitFor((f) => f.type === "steer.queued");
    expect(queued.requestId).toBe("r1");
    // An operator approves (the member may not decide its own run); the member's socket follows the run.
    await decide(app, operator.apiKey, (requested.approval as { id: string }).id, "approve");
    await client.waitFor((f) => f.type === "response.completed" && f.status === "completed");
    await waitUntil(async () => (await steeringRows(app, responseId))[0]?.status === "committed", 30_000, "commit");
    expect(client.of(responseId).map((f) => f.type)).toContain("steer.committed");
    client.close();
  });
});
