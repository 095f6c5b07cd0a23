import { writeFileSync } from "node:fs";
import { createServer, type Server, type Socket, connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, LiveClient, lineCount, ok200, readSse, rows, type TWireFrame, waitUntil, workspaceOf } from "../integration/helpers";
import { auditDatabase, formatAudit } from "../../scripts/load/audit";

/**
 * Fault: WebSockets drop mid-stream, without a close frame (the network goes away: a TCP proxy
 * between client and server is cut). The runs are not lost: what was suspended stays decidable
 * over HTTP, running work goes on, and the events endpoint replays every frame, gap-free.
 */

/** A TCP proxy in front of the app whose connections can all be cut at once. */
class Cutter {
  private sockets = new Set<Socket>();
  private server: Server;
  url = "";
  constructor(target: URL) {
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      this.sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
    });
  }
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${address.port}`;
    return this;
  }
  /** Cuts every connection through the proxy (both directions, no close frames). */
  cut(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let app: TTestApp;
let alice: TTestUser;
let cutter: Cutter;

beforeAll(async () => {
  app = await startTestApp();
  // Starts runs and decides them: an operator may approve its own (a member may not).
  alice = await app.user("operator");
  cutter = await new Cutter(new URL(app.url)).start();
});
afterAll(async () => {
  await cutter?.close();
  await app?.close();
});

const viaProxy = () => ({ url: cutter.url }) as TTestApp;

/** Every stored frame of a response, replayed over the events endpoint (it closes after the terminal frame). */
async function replay(responseId: string, sessionId: string, after = -1): Promise<TWireFrame[]> {
  const res = await app.api(`/v1/responses/${responseId}/events?sessionId=${sessionId}&after=${after}`, { key: alice.apiKey });
  expect(res.status).toBe(200);
  const sse = readSse(res);
  await sse.done;
  return sse.events.map((e) => e.data);
}

const expectContiguous = (frames: TWireFrame[], from = 0) => expect(frames.map((f) => f.sequence)).toEqual(frames.map((_, i) => from + i));

/** Frames as seen on the wire, without the socket-only `requestId`. */
const bare = (frames: TWireFrame[]) => frames.map(({ requestId: _r, ...rest }) => rest);

const execScript = (...commands: string[]) => ({ script: [{ text: "Working", toolCalls: commands.map((command) => ({ name: "exec", arguments: { command } })) }, { text: "done" }] });

describe(`fault: WebSockets drop mid-stream (${testDbKind()})`, () => {
  test("dropped right after approval.requested: the approval stays pending, is decided over HTTP, and the replay is complete", async () => {
    const live = await LiveClient.open(viaProxy(), alice.apiKey);
    live.send({ type: "response.create", input: execScript("echo a >> a.txt"), requestId: "r1" });
    const requested = await live.waitFor((f) => f.type === "approval.requested");
    const responseId = requested.responseId;
    await live.waitFor((f) => f.type === "response.completed" && f.responseId === responseId);
    const seen = live.of(responseId);
    cutter.cut();
    await live.closed;
    const approval = requested.approval as { id: string };
    const done = await ok200(await decide(app, alice.apiKey, approval.id, "approve"));
    expect(done.status).toBe("completed");
    expect(lineCount(workspaceOf(app, requested.sessionId), "a.txt")).toBe(1);
    const all = await replay(responseId, live.sessionId);
    expectContiguous(all);
    expect(bare(all.slice(0, seen.length))).toEqual(bare(seen));
    expect(all.map((f) => f.type)).toContain("approval.resolved");
    expect(all.at(-1)).toMatchObject({ type: "response.completed", status: "completed" });
  });

  test("dropped while an approved command runs: the run goes on without the socket; the replay after the last seen sequence completes it", async () => {
    const live = await LiveClient.open(viaProxy(), alice.apiKey);
    // The command runs until the test lets it finish, after the drop: it surely runs while the socket goes.
    live.send({ type: "response.create", input: execScript("echo started > started.txt; until [ -e go ]; do sleep 0.05; done; echo b >> b.txt") });
    const requested = await live.waitFor((f) => f.type === "approval.requested");
    const responseId = requested.responseId;
    live.send({ type: "approval.decision", responseId, approvalId: (requested.approval as { id: string }).id, decision: "approve" });
    await live.waitFor((f) => f.type === "approval.resolved");
    const seen = live.of(responseId);
    const lastSeen = Math.max(...seen.map((f) => f.sequence));
    const cwd = workspaceOf(app, requested.sessionId);
    await waitUntil(() => lineCount(cwd, "started.txt") === 1, 30_000, "the command to start");
    cutter.cut();
    await live.closed;
    writeFileSync(join(cwd, "go"), "");
    const rest = await replay(responseId, live.sessionId, lastSeen);
    expectContiguous(rest, lastSeen + 1);
    expect(rest.at(-1)).toMatchObject({ type: "response.completed", status: "completed" });
    expect(lineCount(workspaceOf(app, requested.sessionId), "b.txt")).toBe(1);
    const all = await replay(responseId, live.sessionId);
    expect(bare(all)).toEqual(bare([...seen, ...rest]));
  });

  test("dropped while a client tool waits on the socket: the request stays pending and is submitted over HTTP", async () => {
    const live = await LiveClient.open(viaProxy(), alice.apiKey);
    live.send({ type: "response.create", input: { script: [{ toolCalls: [{ name: "get_page_context" }] }, { text: "thanks" }] } });
    const requested = await live.waitFor((f) => f.type === "client_tool.requested");
    cutter.cut();
    await live.closed;
    const id = (requested.clientTool as { id: string }).id;
    const done = await ok200(await app.api(`/v1/client-tools/${id}`, { key: alice.apiKey, body: { output: { url: "https://example.test", title: "Example" } } }));
    expect(done.status).toBe("completed");
    const all = await replay(requested.responseId, live.sessionId);
    expectContiguous(all);
    expect(all.at(-1)).toMatchObject({ type: "response.completed", status: "completed" });
  });

  test("many sockets dropped at once mid-run: every run is decided over HTTP, every replay is complete, the audit passes", async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, () => LiveClient.open(viaProxy(), alice.apiKey)));
    for (const [i, c] of clients.entries()) c.send({ type: "response.create", input: execScript(`echo ${i} >> many.txt`) });
    const requested = await Promise.all(clients.map((c) => c.waitFor((f) => f.type === "approval.requested")));
    cutter.cut();
    await Promise.all(clients.map((c) => c.closed));
    const results = await Promise.all(requested.map((r) => decide(app, alice.apiKey, (r.approval as { id: string }).id, "approve").then(ok200)));
    expect(results.map((r) => r.status)).toEqual(requested.map(() => "completed"));
    for (const [i, r] of requested.entries()) {
      const all = await replay(r.responseId, clients[i]?.sessionId as string);
      expectContiguous(all);
      expect(all.at(-1)).toMatchObject({ status: "completed" });
      expect(lineCount(workspaceOf(app, r.sessionId), "many.txt")).toBe(1);
    }
    // A client that reconnects (directly this time) follows from where it was, over a new socket.
    const again = await LiveClient.open(app, alice.apiKey, { sessionId: clients[0]?.sessionId });
    again.send({ type: "response.subscribe", responseId: requested[0]?.responseId, after: -1 });
    await again.waitFor((f) => f.type === "response.completed" && f.status === "completed");
    expectContiguous(again.of(requested[0]?.responseId as string));
    again.close();
    const report = await auditDatabase((text) => rows(app, text));
    expect(report.ok, formatAudit(report).join("\n")).toBe(true);
  });
});
