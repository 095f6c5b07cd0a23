import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, expectError, getResponse, invokeApproval, ok200, waitUntil } from "./helpers";

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
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "sleep 2; echo done > done.txt", { followedBy: [{ text: "finished" }] });
    const started = Date.now();
    const error = await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 504, "timeout");
    expect(Date.now() - started).toBeLessThan(1900);
    expect(error.detail).toContain(env.id);
    const done = await waitUntil(async () => {
      const body = await ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId));
      return body.status === "completed" ? body : null;
    }, 10_000, "completion");
    expect(done.outputText).toBe("finished");
    expect(existsSync(join(cwd, "done.txt"))).toBe(true);
    // The decision was committed before the timeout: it cannot be made again.
    await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "already_decided");
  });
});
