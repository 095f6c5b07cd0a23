import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { createTestDatabaseUrl, testDbKind } from "../../db/testing";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { startTestApp } from "../../server/testing/test-app";
import { decide, execTurn, getResponse, invokeApproval, LiveClient, script, sleep, waitUntil } from "./helpers";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

const post = (url: string, key: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

async function serverProcess(env: Record<string, string>): Promise<{ server: TServerProcess; key: string; dataDir: string; databaseUrl?: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-drain-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const database = await createTestDatabaseUrl();
  if (database) cleanups.push(database.drop);
  const server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url, env });
  cleanups.push(() => server.kill("SIGKILL"));
  return { server, key: await demoApiKey(dataDir), dataDir, databaseUrl: database?.url };
}

const exited = (server: TServerProcess) =>
  new Promise<number | null>((resolve) => {
    if (server.child.exitCode !== null) return resolve(server.child.exitCode);
    server.child.once("exit", (code) => resolve(code));
  });

describe(`graceful shutdown (${testDbKind()})`, () => {
  it("SIGTERM during an approved `sleep 3`: new runs and decisions get 503 + Retry-After, the command finishes, the run completes, the process exits 0", async () => {
    const { server, key, dataDir } = await serverProcess({ COUNTERSIGN_DRAIN_MS: "30000" });
    const created = await (await post(`${server.url}/v1/responses`, key, { input: script([execTurn("sleep 3 && echo slept > slept.txt", "working"), { text: " done" }]) })).json();
    expect(created.status).toBe("requires_action");
    // The decision answers at the run's next boundary (its completion), so it is left in flight.
    const deciding = post(`${server.url}/v1/approvals/${created.requiredAction.id}`, key, { decision: "approve" });
    await waitUntil(async () => (await (await fetch(`${server.url}/v1/responses/${created.id}?sessionId=${created.sessionId}`, { headers: { authorization: `Bearer ${key}` } })).json()).status === "in_progress", 10_000, "the approved command to start");
    await sleep(300);
    const startedAt = Date.now();
    server.child.kill("SIGTERM");
    const exit = exited(server);
    await sleep(300);

    // This replica admits nothing new while it drains: a run, a decision, a new socket.
    const refused = await post(`${server.url}/v1/responses`, key, { input: "hello" });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect((await refused.json()).code).toBe("capacity");
    const refusedDecision = await post(`${server.url}/v1/approvals/appr_unknown`, key, { decision: "approve" });
    expect(refusedDecision.status).toBe(503);
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/v1/live`, { headers: { authorization: `Bearer ${key}` } });
    const upgradeStatus = await new Promise<number>((resolve) => {
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      socket.on("open", () => resolve(101));
      socket.on("error", () => {});
    });
    expect(upgradeStatus).toBe(503);
    // Reads go on; readiness says it is draining so load balancers stop sending work.
    expect((await fetch(`${server.url}/v1/healthz`)).status).toBe(200);
    const ready = await fetch(`${server.url}/v1/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).reason).toBe("draining");

    const done = await (await deciding).json();
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("working done");
    expect(existsSync(join(dataDir, "workspaces", created.sessionId, "slept.txt"))).toBe(true);
    expect(await exit).toBe(0);
    // It waited for the command (about 3 s from its start), not for the whole 30 s window.
    expect(Date.now() - startedAt).toBeLessThan(25_000);
    expect(server.output()).not.toMatch(/interrupted/);
  }, 400_000);

  it("a command that outlives the drain window is interrupted, marked so in its trajectory, and the next process adopts the run", async () => {
    const { server, key, dataDir, databaseUrl } = await serverProcess({ COUNTERSIGN_DRAIN_MS: "500", LOG_LEVEL: "warn" });
    const created = await (await post(`${server.url}/v1/responses`, key, { input: script([execTurn("sleep 30", "long"), { text: " done" }]) })).json();
    const deciding = post(`${server.url}/v1/approvals/${created.requiredAction.id}`, key, { decision: "approve" }).catch(() => null);
    await waitUntil(async () => (await (await fetch(`${server.url}/v1/responses/${created.id}?sessionId=${created.sessionId}`, { headers: { authorization: `Bearer ${key}` } })).json()).status === "in_progress", 10_000, "the approved command to start");
    await sleep(300);
    const startedAt = Date.now();
    server.child.kill("SIGTERM");
    expect(await exited(server)).toBe(0);
    expect(Date.now() - startedAt).toBeLessThan(15_000);
    await deciding;
    expect(server.output()).toMatch(/outlived the drain window/);

    // The next process (same data directory and database) shows the interruption in the trajectory.
    const next = await startServerProcess({ dataDir, port: await freePort(), databaseUrl, env: { COUNTERSIGN_DRAIN_MS: "0" } });
    cleanups.push(() => next.kill("SIGKILL"));
    const trajectory = await (await fetch(`${next.url}/api/export/trajectory?responseId=${created.id}`, { headers: { authorization: `Bearer ${key}` } })).text();
    const types = trajectory
      .split("\n")
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types).toContain("attempt.interrupted");
    // Adopted by the next process: an approved command is run at most once, so the interrupted one
    // is not started again; the agent is told so and the run goes on to complete.
    const adopted = await waitUntil(
      async () => {
        const envelope = await (await fetch(`${next.url}/v1/responses/${created.id}?sessionId=${created.sessionId}`, { headers: { authorization: `Bearer ${key}` } })).json();
        return envelope.status === "completed" ? envelope : null;
      },
      60_000,
      "the next process to adopt and complete the run",
    );
    const result = (adopted.output as Array<{ type: string; output?: { error?: string } }>).find((i) => i.type === "tool_result");
    expect(result?.output?.error).toMatch(/stopped while this tool was running; it was not run again/);
    expect(adopted.outputText).toBe("long done");
  }, 400_000);
});

describe(`WS /v1/live keeps idle sockets alive (${testDbKind()})`, () => {
  it("pings an idle socket; a peer that never answers is ended, one that answers stays open", async () => {
    const app = await startTestApp({ livePingMs: 150 });
    cleanups.push(() => app.close());
    const user = await app.user("member");
    const answering = await LiveClient.open(app, user.apiKey);
    let pings = 0;
    answering.ws.on("ping", () => pings++);
    const silent = new WebSocket(`${app.url.replace(/^http/, "ws")}/v1/live`, { headers: { authorization: `Bearer ${user.apiKey}` }, autoPong: false });
    const silentClosed = new Promise<void>((resolve) => silent.on("close", () => resolve()));
    silent.on("error", () => {});
    await silentClosed;
    await waitUntil(() => pings >= 3, 5000, "three pings");
    expect(answering.isOpen).toBe(true);
    answering.close();
  }, 120_000);
});

describe(`drain in one process (${testDbKind()})`, () => {
  it("an attempt still running at the window's end is marked interrupted and its lease released; a suspended run is untouched", async () => {
    const app = await startTestApp();
    cleanups.push(() => app.close());
    const operator = await app.user("operator");
    const waiting = await invokeApproval(app, operator.apiKey, "echo never");
    const { approval, env } = await invokeApproval(app, operator.apiKey, "sleep 20");
    void decide(app, operator.apiKey, approval.id, "approve").catch(() => null);
    await waitUntil(async () => (await (await getResponse(app, operator.apiKey, env.id, env.sessionId)).json()).status === "in_progress", 10_000, "the command to start");
    await sleep(300);
    const outcome = await app.drain(300);
    expect(outcome).toEqual({ finished: 0, interrupted: [env.id] });
    const trajectory = await (await app.api(`/api/export/trajectory?responseId=${env.id}`, { key: operator.apiKey })).text();
    const interrupted = trajectory
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; data?: { reason?: string } })
      .filter((e) => e.type === "attempt.interrupted");
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]?.data?.reason).toBe("shutdown");
    // The other run still waits for its person; nothing about it changed.
    expect((await (await getResponse(app, operator.apiKey, waiting.env.id, waiting.env.sessionId)).json()).status).toBe("requires_action");
  }, 120_000);
});
