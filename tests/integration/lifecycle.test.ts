import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testDbKind } from "../../db/testing";
import { approvals, clientToolRequests, responseSteps, responses } from "../../db/schema";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { waitForPid } from "./runtime-helpers";
import { decide, execTurn, expectError, getResponse, invoke, invokeApproval, lineCount, ok200, readSse, script, type TBody, waitUntil, workspaceOf } from "./helpers";

let app: TTestApp;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ expirySweepMs: 200 });
  // Starts runs and decides them: an operator may approve its own (separation of duties is tested elsewhere).
  operator = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

const getBody = async (env: { id: string; sessionId: string }) => ok200(await getResponse(app, operator.apiKey, env.id, env.sessionId));

/**
 * Runs `during` while watching what the server's spawner is asked to start, and returns how many
 * of those requests carried `command`: "it never ran" is then a fact, not a guess after a sleep.
 */
async function spawnsOf(command: string, during: () => Promise<void>): Promise<number> {
  const spawned = vi.spyOn(app.deps.sandbox.spawner, "run");
  try {
    await during();
    return spawned.mock.calls.filter(([request]) => JSON.stringify(request).includes(command)).length;
  } finally {
    spawned.mockRestore();
  }
}

describe(`rule 3: denied or expired never runs (${testDbKind()})`, () => {
  it("deny answers {id, status:denied}, the response is denied, the command never ran", async () => {
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "echo ran > side.txt");
    // The run is over once its status is terminal: whatever it would have started, it has asked for by then.
    const spawns = await spawnsOf("side.txt", async () => {
      const res = await decide(app, operator.apiKey, approval.id, "deny");
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ id: approval.id, status: "denied" });
      const after = await getBody(env);
      expect(after).toMatchObject({ id: env.id, status: "denied", outputText: "", output: [] });
      expect(after.requiredAction).toBeUndefined();
    });
    expect(spawns).toBe(0);
    expect(existsSync(join(cwd, "side.txt"))).toBe(false);
    const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect(row?.status).toBe("denied");
    await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "already_decided");
  });

  it("an expired approval gets 409 expired, the response is denied, the command never ran", async () => {
    // A TTL no slow machine reaches by itself; the server's clock moves past it instead of a sleep.
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "echo ran > side.txt", { approvalTtlMs: 60_000 });
    expect(Date.parse(approval.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    app.clock.advance(60_000 + 1000);
    try {
      const spawns = await spawnsOf("side.txt", async () => {
        await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "expired");
        // The expiry ends the run in the same transaction: the response is settled when the 409 answers.
        const after = await getBody(env);
        expect(after.status).toBe("denied");
        await expectError(await decide(app, operator.apiKey, approval.id, "deny"), 409, "expired");
      });
      expect(spawns).toBe(0);
    } finally {
      app.clock.reset();
    }
    expect(existsSync(join(cwd, "side.txt"))).toBe(false);
  });

  it("the expiry sweep settles an unattended approval as denied", async () => {
    const { env, approval } = await invokeApproval(app, operator.apiKey, "echo ran > side.txt", { approvalTtlMs: 60_000 });
    app.clock.advance(60_000 + 1000);
    try {
      // Nobody decides or reads the approval: only the sweep can settle it.
      const denied = await waitUntil(async () => ((await getBody(env)).status === "denied" ? true : null), 30_000, "sweep");
      expect(denied).toBe(true);
    } finally {
      app.clock.reset();
    }
    const [row] = await app.deps.db.select().from(approvals).where(eq(approvals.id, approval.id));
    expect(row?.status).toBe("expired");
    await expectError(await decide(app, operator.apiKey, approval.id, "approve"), 409, "expired");
  });

  it("an expired client-tool request gets 409 expired and the response fails", async () => {
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "get_page_context" }] }, { text: "never" }], { clientToolTtlMs: 60_000 }));
    expect(env.status).toBe("requires_action");
    const requestId = env.requiredAction?.id as string;
    app.clock.advance(60_000 + 1000);
    try {
      await expectError(await app.api(`/v1/client-tools/${requestId}`, { key: operator.apiKey, body: { output: { url: "u", title: "t" } } }), 409, "expired");
    } finally {
      app.clock.reset();
    }
    const after = await getBody(env);
    expect(after.status).toBe("failed");
    expect(after.error).toEqual({ code: "client_tool_expired", message: expect.any(String) });
    const [row] = await app.deps.db.select().from(clientToolRequests).where(eq(clientToolRequests.id, requestId));
    expect(row?.status).toBe("expired");
  });
});

describe(`rules 4 and 5: resume never replays; a later block asks again (${testDbKind()})`, () => {
  it("two approvals in one run: each command runs once, echo results are stored once, the second approval is new", async () => {
    const input = script([
      { text: "one ", toolCalls: [{ name: "echo", arguments: { text: "before" } }, { name: "exec", arguments: { command: "echo first >> count.txt" } }] },
      { text: "two ", toolCalls: [{ name: "echo", arguments: { text: "between" } }, { name: "exec", arguments: { command: "echo second >> second.txt; wc -l < count.txt" } }] },
      { text: "three" },
    ]);
    const first = await invoke(app, operator.apiKey, input);
    expect(first.status).toBe("requires_action");
    const firstApproval = first.requiredAction as { id: string; cwd: string; arguments: unknown };
    expect(firstApproval.arguments).toEqual({ command: "echo first >> count.txt" });
    const cwd = workspaceOf(app, first.sessionId);
    expect(lineCount(cwd, "count.txt")).toBe(0);

    const second = await ok200(await decide(app, operator.apiKey, firstApproval.id, "approve"));
    expect(second).toMatchObject({ id: first.id, status: "requires_action", approvalId: firstApproval.id, outputText: "", output: [] });
    const secondApproval = second.requiredAction as { id: string; arguments: unknown };
    expect(secondApproval.id).toMatch(/^approval_[0-9a-f]{32}$/);
    expect(secondApproval.id).not.toBe(firstApproval.id);
    expect(secondApproval.arguments).toEqual({ command: "echo second >> second.txt; wc -l < count.txt" });
    expect(lineCount(cwd, "count.txt")).toBe(1);

    const done = await ok200(await decide(app, operator.apiKey, secondApproval.id, "approve"));
    expect(done).toMatchObject({ id: first.id, status: "completed", approvalId: secondApproval.id, outputText: "one two three" });
    expect(readFileSync(join(cwd, "count.txt"), "utf8")).toBe("first\n");
    expect(readFileSync(join(cwd, "second.txt"), "utf8")).toBe("second\n");

    const results = done.output.filter((i) => i.type === "tool_result") as Array<{ callId: string; name: string; output: Record<string, unknown> }>;
    expect(results.map((r) => [r.callId, r.name])).toEqual([
      ["call_0_0", "echo"],
      ["call_0_1", "exec"],
      ["call_1_0", "echo"],
      ["call_1_1", "exec"],
    ]);
    expect(results[0]?.output).toEqual({ text: "before" });
    expect(results[2]?.output).toEqual({ text: "between" });
    expect(results[3]?.output).toMatchObject({ exitCode: 0, stdout: "1\n" });
    expect(done.output.map((i) => i.type)).toEqual(["message", "tool_call", "tool_call", "tool_result", "tool_result", "message", "tool_call", "tool_call", "tool_result", "tool_result", "message"]);

    const steps = await app.deps.db.select().from(responseSteps).where(eq(responseSteps.responseId, first.id));
    const keys = steps.map((s) => s.key).sort();
    // Each decision is stored once, as the settlement its call resumed with (`resolved:`), beside the call's own result.
    expect(keys).toEqual(["model:0", "model:1", "model:2", "resolved:call_0_1", "resolved:call_1_1", "tool:call_0_0", "tool:call_0_1", "tool:call_1_0", "tool:call_1_1"]);
    expect(steps.every((s) => s.status === "completed")).toBe(true);
    const approvalRows = await app.deps.db.select().from(approvals).where(eq(approvals.responseId, first.id));
    expect(approvalRows.map((a) => a.status)).toEqual(["approved", "approved"]);
    const toolResultFrames = await app.deps.db.execute(
      // Each tool result is one stored frame, never replayed on resume.
      sqlCountFrames(first.id),
    );
    expect(countOf(toolResultFrames)).toBe(4);

    // The whole stored stream: every frame once, nothing replayed by the two resumes.
    const replay = readSse(await app.api(`/v1/responses/${first.id}/events?sessionId=${first.sessionId}`, { key: operator.apiKey }));
    await replay.done;
    // Each of the two suspending turns: its text, its two calls, echo's result, the approval and the
    // boundary; after the decision, the resolution and exec's result.
    const suspendingTurn = [
      "response.text.delta",
      "response.tool_call",
      "response.tool_call",
      "response.tool_result",
      "approval.requested",
      "response.completed",
      "approval.resolved",
      "response.tool_result",
    ];
    expect(replay.events.map((e) => e.event)).toEqual(["response.created", ...suspendingTurn, ...suspendingTurn, "response.text.delta", "response.completed"]);
    expect(replay.events.map((e) => e.data.sequence)).toEqual(replay.events.map((_, i) => i));
  });

  it("a later response in the same session works in the same workspace", async () => {
    const a = await invokeApproval(app, operator.apiKey, "echo one >> shared.txt");
    await ok200(await decide(app, operator.apiKey, a.approval.id, "approve"));
    const b = await invokeApproval(app, operator.apiKey, "echo two >> shared.txt", { sessionId: a.env.sessionId });
    expect(b.env.sessionId).toBe(a.env.sessionId);
    expect(b.env.id).not.toBe(a.env.id);
    expect(b.cwd).toBe(a.cwd);
    expect(b.approval.id).not.toBe(a.approval.id);
    await ok200(await decide(app, operator.apiKey, b.approval.id, "approve"));
    expect(readFileSync(join(a.cwd, "shared.txt"), "utf8")).toBe("one\ntwo\n");
  });
});

describe(`expiry defaults (${testDbKind()})`, () => {
  it("approvals expire after 15 minutes and client tools after 5 by default", async () => {
    const started = Date.now();
    const { approval } = await invokeApproval(app, operator.apiKey, "true");
    expect(Date.parse(approval.expiresAt) - started).toBeGreaterThan(15 * 60_000 - 5000);
    expect(Date.parse(approval.expiresAt) - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    const ct = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "get_page_context" }] }]));
    const expiresAt = Date.parse(ct.requiredAction?.expiresAt as string);
    expect(expiresAt - started).toBeGreaterThan(5 * 60_000 - 5000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(5 * 60_000);
  });
});

describe(`rule 7: the completed envelope is stored before the status turns terminal (${testDbKind()})`, () => {
  it("every poll that says completed carries the full output, and the stored envelope is what GET returns", async () => {
    const turns = Array.from({ length: 12 }, (_, i) => ({ text: `t${i} `, toolCalls: [{ name: "echo", arguments: { text: `e${i}` } }] }));
    // The command holds the run in progress until the test lets it go (a file in the workspace), so the
    // polls are known to see in_progress, then race the turn to completed.
    const first = await invoke(app, operator.apiKey, script([execTurn("until [ -e go ]; do sleep 0.05; done; echo ok"), ...turns, { text: "end" }]));
    const approvalId = first.requiredAction?.id as string;
    const expectedText = `${turns.map((t) => t.text).join("")}end`;

    const polls: TBody[] = [];
    const poller = async () => {
      for (;;) {
        const res = await getResponse(app, operator.apiKey, first.id, first.sessionId);
        const body = (await res.json()) as TBody;
        expect(res.status).toBe(200);
        polls.push(body);
        if (body.status === "completed") return;
      }
    };
    const pollers = [poller(), poller(), poller(), poller()];
    const approved = decide(app, operator.apiKey, approvalId, "approve");
    await waitUntil(() => polls.some((p) => p.status === "in_progress"), 30_000, "a poll to see the run in progress");
    writeFileSync(join(workspaceOf(app, first.sessionId), "go"), "");
    const done = await ok200(await approved);
    // Once completed is stored, every poller's next read says so and it stops.
    await Promise.all(pollers);

    expect(done.status).toBe("completed");
    expect(done.outputText).toBe(expectedText);
    const completedPolls = polls.filter((p) => p.status === "completed");
    expect(completedPolls.length).toBeGreaterThanOrEqual(4);
    expect(polls.some((p) => p.status === "in_progress")).toBe(true);
    for (const p of completedPolls) {
      expect(p.outputText).toBe(expectedText);
      const { approvalId: _a, ...envelope } = done;
      expect(p).toEqual(envelope);
    }
    for (const p of polls.filter((x) => x.status !== "completed")) {
      expect(p.outputText).toBe("");
      expect(p.output).toEqual([]);
    }
    const [row] = await app.deps.db.select().from(responses).where(eq(responses.id, first.id));
    expect(row?.status).toBe("completed");
    expect(row?.envelope).toEqual(await getBody(first));
    expect(row?.envelope?.output).toHaveLength(2 + 12 * 3 + 1);
  });
});

describe(`cancel (${testDbKind()})`, () => {
  it("cancelling while an approved long `sleep` runs kills the process and the response stays cancelled", async () => {
    // The command would sleep, and its exec timeout run, far longer than this test may take: only the
    // cancel can end it (so no clock is needed to tell "killed" from "ended by itself").
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "echo $$ > pid.txt; exec sleep 3600", timeoutMs: 600_000 } }] }, { text: "never" }]));
    expect(env.status).toBe("requires_action");
    const approval = env.requiredAction as { id: string };
    const cwd = workspaceOf(app, env.sessionId);
    const approving = decide(app, operator.apiKey, approval.id, "approve");
    const pid = await waitForPid(cwd);
    expect(alive(pid)).toBe(true);
    expect((await getBody(env)).status).toBe("in_progress");

    const cancelled = await ok200(await app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, method: "POST" }));
    expect(cancelled).toMatchObject({ id: env.id, sessionId: env.sessionId, status: "cancelled", outputText: "", output: [] });
    await waitUntil(() => !alive(pid), 30_000, "the sleep to die");
    const approvedBody = await ok200(await approving);
    expect(approvedBody).toMatchObject({ id: env.id, status: "cancelled", approvalId: approval.id });

    // Once the attempt has ended on this server, nothing of it may turn the response into something else.
    await waitUntil(() => !app.deps.host.isLocal(env.id), 30_000, "the attempt to end");
    const after = await getBody(env);
    expect(after.status).toBe("cancelled");
    await expectError(await app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, method: "POST" }), 409, "conflict");
  });

  it("an approval of a cancelled response cannot be decided (409), and nothing runs", async () => {
    const { env, approval, cwd } = await invokeApproval(app, operator.apiKey, "echo ran > side.txt");
    const cancelled = await ok200(await app.api(`/v1/responses/${env.id}/cancel`, { key: operator.apiKey, body: { reason: "changed my mind" } }));
    expect(cancelled.status).toBe("cancelled");
    const spawns = await spawnsOf("side.txt", async () => {
      const res = await decide(app, operator.apiKey, approval.id, "approve");
      expect(res.status).toBe(409);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({ detail: expect.any(String), code: expect.any(String) });
      await expectError(await decide(app, operator.apiKey, approval.id, "deny"), 409, body.code as string);
    });
    expect(spawns).toBe(0);
    expect(app.deps.host.isLocal(env.id)).toBe(false);
    expect(existsSync(join(cwd, "side.txt"))).toBe(false);
    const [row] = await app.deps.db.select().from(approvals).where(and(eq(approvals.id, approval.id)));
    expect(row?.status).toBe("cancelled");
    expect((await getBody(env)).status).toBe("cancelled");
  });

  it("cancel of an unknown response is 404 and of a finished one 409", async () => {
    await expectError(await app.api("/v1/responses/resp_00000000000000000000000000000000/cancel", { key: operator.apiKey, method: "POST" }), 404, "not_found");
    const done = await invoke(app, operator.apiKey, "hi");
    expect(done.status).toBe("completed");
    await expectError(await app.api(`/v1/responses/${done.id}/cancel`, { key: operator.apiKey, method: "POST" }), 409, "conflict");
  });
});

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

const sqlCountFrames = (responseId: string) =>
  sql`select count(*) as n from response_events where response_id = ${responseId} and type = 'response.tool_result' and frame_seq is not null`;
function countOf(result: unknown): number {
  const list = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Array<{ n: number | string }>;
  return Number(list[0]?.n ?? 0);
}
