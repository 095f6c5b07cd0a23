import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { createTestDatabaseUrl, testDbKind } from "../../db/testing";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { startTestApp } from "../../server/testing/test-app";
import { decide, execTurn, getResponse, invoke, invokeApproval, LiveClient, script, waitUntil } from "./helpers";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

const post = (url: string, key: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

async function serverProcess(env: Record<string, string>, options: { viaNpm?: boolean } = {}): Promise<{ server: TServerProcess; key: string; dataDir: string; databaseUrl?: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-drain-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const database = await createTestDatabaseUrl();
  if (database) cleanups.push(database.drop);
  const server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url, env, viaNpm: options.viaNpm });
  cleanups.push(() => server.kill("SIGKILL"));
  return { server, key: await demoApiKey(dataDir), dataDir, databaseUrl: database?.url };
}

/** The session's workspace of a server process (a file there shows its command has started). */
const workspace = (dataDir: string, sessionId: string) => join(dataDir, "workspaces", sessionId);

/** Until the server says it drains (it admits nothing new from then on). */
const draining = (server: TServerProcess) =>
  waitUntil(async () => (await fetch(`${server.url}/v1/readyz`).catch(() => null))?.status === 503, 30_000, "the server to drain");

/** Sends `signal` to the whole process group of a server started through npm. */
const signalGroup = (server: TServerProcess, signal: NodeJS.Signals) => process.kill(-(server.child.pid as number), signal);

const exited = (server: TServerProcess) =>
  new Promise<number | null>((resolve) => {
    if (server.child.exitCode !== null) return resolve(server.child.exitCode);
    server.child.once("exit", (code) => resolve(code));
  });

describe(`graceful shutdown (${testDbKind()})`, () => {
  it("SIGTERM during an approved command: new runs and decisions get 503 + Retry-After, the command finishes, the run completes, the process exits 0", async () => {
    // A drain window longer than the test may take: if the process waited for the window rather than
    // for the command, the test would time out (no clock needed to tell them apart).
    const { server, key, dataDir } = await serverProcess({ COUNTERSIGN_DRAIN_MS: "3600000" });
    // The command runs until the test lets it finish (a file), after checking what a draining server refuses.
    const created = await (await post(`${server.url}/v1/responses`, key, { input: script([execTurn("echo started > started.txt; until [ -e go ]; do sleep 0.05; done; echo slept > slept.txt", "working"), { text: " done" }]) })).json();
    expect(created.status).toBe("requires_action");
    // The decision answers at the run's next boundary (its completion), so it is left in flight.
    const deciding = post(`${server.url}/v1/approvals/${created.requiredAction.id}`, key, { decision: "approve" });
    await waitUntil(() => existsSync(join(workspace(dataDir, created.sessionId), "started.txt")), 30_000, "the approved command to start");
    server.child.kill("SIGTERM");
    const exit = exited(server);
    await draining(server);

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
    // Still draining: the command has not been let go yet.
    expect(server.child.exitCode).toBeNull();

    writeFileSync(join(workspace(dataDir, created.sessionId), "go"), "");
    const done = await (await deciding).json();
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("working done");
    expect(existsSync(join(dataDir, "workspaces", created.sessionId, "slept.txt"))).toBe(true);
    expect(await exit).toBe(0);
    expect(server.output()).not.toMatch(/interrupted/);
  }, 400_000);

  it("SIGTERM to the process group of `npm run serve` (systemd, docker stop, Ctrl-C) drains like one signal: an approved sleep 3 finishes and its caller gets the answer", async () => {
    // The group signal reaches npm (which forwards it again), the server, and nothing it started:
    // the spawner and the command live in sessions of their own, so only the server ends them.
    const { server, key, dataDir } = await serverProcess({ COUNTERSIGN_DRAIN_MS: "3600000" }, { viaNpm: true });
    // Without bubblewrap, one warning at boot names the weaker mode and how to install bubblewrap
    // (with it, the sandbox's boot line is at info level, below these servers' log level).
    if (!existsSync("/usr/bin/bwrap")) {
      expect(server.output().match(/approved commands run in sandbox mode/g)).toHaveLength(1);
      expect(server.output()).toContain("sudo apt-get install -y bubblewrap");
    } else expect(server.output()).not.toContain("apt-get install");
    const created = await (await post(`${server.url}/v1/responses`, key, { input: script([execTurn("echo started > started.txt; sleep 3; until [ -e go ]; do sleep 0.05; done; echo slept > slept.txt", "working"), { text: " done" }]) })).json();
    expect(created.status).toBe("requires_action");
    const deciding = post(`${server.url}/v1/approvals/${created.requiredAction.id}`, key, { decision: "approve" });
    await waitUntil(() => existsSync(join(workspace(dataDir, created.sessionId), "started.txt")), 30_000, "the approved command to start");
    const exit = exited(server);
    signalGroup(server, "SIGTERM");
    await draining(server);
    const refused = await post(`${server.url}/v1/responses`, key, { input: "hello" });
    expect(refused.status).toBe(503);
    // npm waits for the server (a supervisor watching npm sees the drain through).
    expect(server.child.exitCode).toBeNull();

    writeFileSync(join(workspace(dataDir, created.sessionId), "go"), "");
    const done = await (await deciding).json();
    expect(done.status).toBe("completed");
    expect(done.outputText).toBe("working done");
    expect(existsSync(join(workspace(dataDir, created.sessionId), "slept.txt"))).toBe(true);
    expect(await exit).toBe(0);
    expect(server.output()).not.toMatch(/a second signal|interrupted/);
  }, 400_000);

  it("a signal well after the first stops without waiting for the window", async () => {
    const { server, key, dataDir } = await serverProcess({ COUNTERSIGN_DRAIN_MS: "3600000" }, { viaNpm: true });
    const created = await (await post(`${server.url}/v1/responses`, key, { input: script([{ text: "long", toolCalls: [{ name: "exec", arguments: { command: "echo started > started.txt; exec sleep 600", timeoutMs: 600_000 } }] }, { text: " done" }]) })).json();
    const deciding = post(`${server.url}/v1/approvals/${created.requiredAction.id}`, key, { decision: "approve" }).catch(() => null);
    await waitUntil(() => existsSync(join(workspace(dataDir, created.sessionId), "started.txt")), 30_000, "the approved command to start");
    const exit = exited(server);
    signalGroup(server, "SIGTERM");
    await draining(server);
    // The server has handled the first signal (it drains); a second one sent from now on is later than a second after it.
    await new Promise((r) => setTimeout(r, 1500));
    signalGroup(server, "SIGTERM");
    expect(await exit).toBe(1);
    await deciding;
    expect(server.output()).toMatch(/a second signal: stopping without waiting for running attempts/);
  }, 400_000);

  it("a command that outlives the drain window is interrupted, marked so in its trajectory, and the next process adopts the run", async () => {
    const { server, key, dataDir, databaseUrl } = await serverProcess({ COUNTERSIGN_DRAIN_MS: "500", LOG_LEVEL: "warn" });
    // A command that never ends by itself (nor by its exec timeout) while the test runs: when the
    // process exits, only the end of the drain window explains it.
    const created = await (await post(`${server.url}/v1/responses`, key, { input: script([{ text: "long", toolCalls: [{ name: "exec", arguments: { command: "echo started > started.txt; exec sleep 600", timeoutMs: 600_000 } }] }, { text: " done" }]) })).json();
    const deciding = post(`${server.url}/v1/approvals/${created.requiredAction.id}`, key, { decision: "approve" }).catch(() => null);
    await waitUntil(() => existsSync(join(workspace(dataDir, created.sessionId), "started.txt")), 30_000, "the approved command to start");
    server.child.kill("SIGTERM");
    expect(await exited(server)).toBe(0);
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
    // A period no scheduling hiccup of a loaded machine comes near: the answering peer's pong must
    // be read before the next tick (a peer that never answers is still ended at the second tick).
    const app = await startTestApp({ livePingMs: 2000 });
    cleanups.push(() => app.close());
    const user = await app.user("member");
    const answering = await LiveClient.open(app, user.apiKey);
    let pings = 0;
    answering.ws.on("ping", () => pings++);
    const silent = new WebSocket(`${app.url.replace(/^http/, "ws")}/v1/live`, { headers: { authorization: `Bearer ${user.apiKey}` }, autoPong: false });
    const silentClosed = new Promise<void>((resolve) => silent.on("close", () => resolve()));
    silent.on("error", () => {});
    await silentClosed;
    // Two pings: the second tick found the first one answered.
    await waitUntil(() => pings >= 2, 30_000, "two pings");
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
    // A command that never ends by itself while the test runs (app.close stops it): at the window's end it still runs.
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "echo started > started.txt; exec sleep 600", timeoutMs: 600_000 } }] }, { text: "done" }]));
    const approval = env.requiredAction as { id: string };
    void decide(app, operator.apiKey, approval.id, "approve").catch(() => null);
    await waitUntil(() => existsSync(join(workspace(app.dataDir, env.sessionId), "started.txt")), 30_000, "the command to start");
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
