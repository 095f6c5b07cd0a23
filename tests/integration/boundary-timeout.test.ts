import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, expectError, getResponse, ok200, readSse, script, waitUntil, workspaceOf } from "./helpers";

let app: TTestApp;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ boundaryTimeoutMs: 1000 });
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

describe(`waiting for the next boundary (${testDbKind()})`, () => {
  it("answers 504 timeout when the run outlasts the wait; the run goes on and can be polled", async () => {
    // Started as a stream, which the 1 s bound does not apply to: only the decision's wait meets it,
    // however slow the machine is to reach the approval.
    const res = await app.api("/v1/responses", { key: operator.apiKey, body: { input: script([execTurn("until [ -e go ]; do sleep 0.05; done; echo done > done.txt"), { text: "finished" }]), stream: true } });
    expect(res.status).toBe(200);
    const stream = readSse(res);
    await stream.done;
    const boundary = stream.events.at(-1)?.data;
    expect(boundary).toMatchObject({ type: "response.completed", status: "requires_action" });
    const env = { id: boundary?.responseId as string, sessionId: boundary?.sessionId as string };
    const approval = stream.events.find((e) => e.event === "approval.requested")?.data.approval as { id: string };
    const cwd = workspaceOf(app, env.sessionId);
    // The command waits for a file only the test writes, after the answer: the run cannot reach its
    // next boundary before, so the 504 can only be the wait's bound.
    const error = await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 504, "timeout");
    expect(error.detail).toContain(env.id);
    expect((await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId))).status).toBe("in_progress");
    writeFileSync(join(cwd, "go"), "");
    const done = await waitUntil(async () => {
      const body = await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId));
      return body.status === "completed" ? body : null;
    }, 30_000, "completion");
    expect(done.outputText).toBe("finished");
    expect(existsSync(join(cwd, "done.txt"))).toBe(true);
    // The decision was committed before the timeout: it cannot be made again.
    await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "already_decided");
  });
});
