import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TTestApp } from "../../server/testing/test-app";
import { LiveClient, readSse, sleep, waitUntil } from "../integration/helpers";
import { call, startCluster, type TCluster } from "./cluster";

let cluster: TCluster;
beforeAll(async () => {
  cluster = await startCluster(3);
});
afterAll(async () => cluster?.close());

/** Parent pids of the processes whose command line contains `needle`. */
function parentsOf(needle: string): number[] {
  // Every ancestor of the matching processes: the command runs under the replica's spawner
  // process (and the sandbox), so the replica is a grandparent or further up.
  const ppidOf = (pid: number): number | null => {
    try {
      const ppid = readFileSync(`/proc/${pid}/status`, "utf8").match(/^PPid:\s+(\d+)/m)?.[1];
      return ppid ? Number(ppid) : null;
    } catch {
      return null;
    }
  };
  const ancestors: number[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) continue;
    } catch {
      continue;
    }
    for (let up = ppidOf(Number(pid)); up !== null && up > 1; up = ppidOf(up)) ancestors.push(up);
  }
  return ancestors;
}

const url = (i: number) => cluster.replicas[i]?.url as string;
const execScript = (...commands: string[]) => ({ script: [...commands.map((command) => ({ toolCalls: [{ name: "exec", arguments: { command } }] })), { text: "done" }] });
const get = async (i: number, id: string, sessionId: string) => (await call(`${url(i)}/v1/responses/${id}?sessionId=${sessionId}`, cluster.key)).json();

describe("replicas on one PostgreSQL", () => {
  test("a run suspended on one replica is recovered, streamed and decided on the others", async () => {
    const started = await (await call(`${url(0)}/v1/responses`, cluster.key, { input: execScript("echo replica >> r.txt") })).json();
    expect(started.status).toBe("requires_action");
    for (const i of [1, 2]) expect((await get(i, started.id, started.sessionId)).requiredAction.id).toBe(started.requiredAction.id);
    const stream = readSse(await call(`${url(2)}/v1/responses/${started.id}/events?sessionId=${started.sessionId}&after=-1`, cluster.key));
    await stream.waitFor((e) => e.event === "approval.requested");
    const decided = await (await call(`${url(1)}/v1/approvals/${started.requiredAction.id}`, cluster.key, { decision: "approve" })).json();
    expect(decided.status).toBe("completed");
    await stream.waitFor((e) => e.event === "response.completed" && e.data.status === "completed");
    await stream.done;
    const types = stream.events.map((e) => e.event);
    expect(types.indexOf("approval.resolved")).toBeLessThan(types.indexOf("response.tool_result"));
    const sequences = stream.events.map((e) => e.data.sequence);
    expect(sequences).toEqual(sequences.map((_, i) => i));
    const envelopes = await Promise.all([0, 1, 2].map((i) => get(i, started.id, started.sessionId)));
    expect(envelopes[1]).toEqual(envelopes[0]);
    expect(envelopes[2]).toEqual(envelopes[0]);
    expect(readFileSync(join(cluster.dataDirs[0] as string, "workspaces", started.sessionId, "r.txt"), "utf8")).toBe("replica\n");
  });

  test("concurrent decisions spread over replicas: exactly one wins", async () => {
    const started = await (await call(`${url(0)}/v1/responses`, cluster.key, { input: execScript("echo once >> once.txt") })).json();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => call(`${url(i % 3)}/v1/approvals/${started.requiredAction.id}`, cluster.key, { decision: "approve" })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(11);
    await waitUntil(async () => (await get(2, started.id, started.sessionId)).status === "completed");
    expect(readFileSync(join(cluster.dataDirs[0] as string, "workspaces", started.sessionId, "once.txt"), "utf8")).toBe("once\n");
  });

  test("a question answered on one replica reaches a waiter on another, with its receipt", async () => {
    const asked = await (await call(`${url(0)}/v1/gateway/question.request`, cluster.key, { questions: [{ questionId: "env", header: "Env", question: "Which?", options: [{ label: "a" }, { label: "b" }] }], timeoutMs: 60_000 })).json();
    // The waiter's own bound is far longer than the test may take: only the answer (its NOTIFY, or the
    // waiter's re-check) ends it. The pause only makes it likely the waiter is already waiting; the
    // outcome does not depend on it (a waiter that arrives after the answer reads it, receipt included).
    const waiter = call(`${url(1)}/v1/gateway/question.waitAnswer`, cluster.key, { id: asked.payload.id, includeResolutionId: true, timeoutMs: 600_000 }).then((r) => r.json());
    await sleep(300);
    const resolved = await (await call(`${url(2)}/v1/gateway/question.resolve`, cluster.key, { id: asked.payload.id, answers: { env: ["a"] }, resolutionId: "receipt-xyz" })).json();
    expect(resolved).toEqual({ ok: true, payload: { status: "answered", answers: { env: ["a"] } } });
    expect((await waiter).payload).toEqual({ status: "answered", answers: { env: ["a"] }, resolutionId: "receipt-xyz" });
  });

  test("a dead replica's attempts are adopted: suspended ones stay decidable, running ones resume without re-running tools", async () => {
    // The second command records each start and would run for minutes: it is still running when its
    // replica dies (however long finding that replica takes), and a second start would show in starts.txt.
    const started = await (await call(`${url(0)}/v1/responses`, cluster.key, { input: execScript("echo a >> a.txt", "echo started >> starts.txt; sleep 600 && echo b >> b.txt", "echo c >> c.txt") })).json();
    const cwd = join(cluster.dataDirs[0] as string, "workspaces", started.sessionId);
    const second = await (await call(`${url(0)}/v1/approvals/${started.requiredAction.id}`, cluster.key, { decision: "approve" })).json();
    expect(second.status).toBe("requires_action");
    // Approve the slow command, find the replica that runs it (the parent of the shell), and kill it mid-command.
    const pending = call(`${url(0)}/v1/approvals/${second.requiredAction.id}`, cluster.key, { decision: "approve" }).catch(() => null);
    const victim = (await waitUntil(() => cluster.replicas.findIndex((r) => r.child.pid !== undefined && parentsOf("sleep 600 && echo b").includes(r.child.pid)) + 1, 30_000, "the command to start")) - 1;
    await cluster.replicas[victim]?.kill("SIGKILL");
    await pending;
    const alive = [0, 1, 2].find((i) => i !== victim) as number;
    const third = await waitUntil(async () => {
      const e = await get(alive, started.id, started.sessionId);
      return e.status === "requires_action" && e.requiredAction.id !== second.requiredAction.id ? e : null;
    }, 20_000, "adoption of the running attempt");
    const done = await (await call(`${url(alive)}/v1/approvals/${third.requiredAction.id}`, cluster.key, { decision: "approve" })).json();
    expect(done.status).toBe("completed");
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("a\n");
    // The interrupted command is never started again: the one start is the first (the run went on past it,
    // so a second start would have happened already), and it never finished.
    expect(readFileSync(join(cwd, "starts.txt"), "utf8")).toBe("started\n");
    expect(existsSync(join(cwd, "b.txt"))).toBe(false);
    expect(readFileSync(join(cwd, "c.txt"), "utf8")).toBe("c\n");
    const interrupted = (done.output as Array<{ type: string; output?: { error?: string } }>).filter((i) => i.type === "tool_result")[1];
    expect(interrupted?.output?.error).toMatch(/not run again/);
    await cluster.restart(victim);
  });

  test("a WebSocket client of a dead replica reconnects to another and continues from its last sequence", async () => {
    const first = await LiveClient.open({ url: url(1) } as TTestApp, cluster.key);
    first.send({ type: "response.create", input: execScript("echo ws >> ws.txt") });
    const requested = await first.waitFor((f) => f.type === "approval.requested");
    const lastSeen = Math.max(...first.frames.filter((f) => typeof f.sequence === "number").map((f) => f.sequence as number));
    await cluster.replicas[1]?.kill("SIGKILL");
    await first.closed;
    const second = await LiveClient.open({ url: url(2) } as TTestApp, cluster.key, { sessionId: first.sessionId });
    const responseId = requested.responseId as string;
    second.send({ type: "response.subscribe", responseId, after: lastSeen });
    second.send({ type: "approval.decision", responseId, approvalId: (requested.approval as { id: string }).id, decision: "approve" });
    const completed = await second.waitFor((f) => f.type === "response.completed" && f.status === "completed", 20_000);
    const seqs = second.frames.filter((f) => f.responseId === responseId).map((f) => f.sequence as number);
    expect(seqs[0]).toBe(lastSeen + 1);
    expect(seqs).toEqual(seqs.map((_, i) => lastSeen + 1 + i));
    expect(completed.outputText).toBe("done");
    second.ws.close();
    await cluster.restart(1);
  });
});
