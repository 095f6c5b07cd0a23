import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startCluster, type TCluster } from "../replicas/cluster";
import { call, expectAuditPasses, lines, requirePostgres, openQuery, retrying } from "./support";

/**
 * Fault: a replica is SIGKILLed while it serves POST /v1/approvals/{id}. Afterwards the decision
 * is either fully applied (approval decided + its approval.resolved event + the run resumed) or not
 * at all (still pending); retrying on the surviving replica then answers 200 (not applied) or 409
 * (applied), and the run completes exactly once: one approval.resolved, one terminal frame, the
 * approved command run at most once.
 */
let cluster: TCluster;
let db: ReturnType<typeof openQuery>;

beforeAll(async () => {
  requirePostgres();
  cluster = await startCluster(2);
  db = openQuery(cluster.databaseUrl);
});
afterAll(async () => {
  await db?.close();
  await cluster?.close();
});

const SURVIVOR = 0;
const VICTIM = 1;
const url = (i: number) => cluster.replicas[i]?.url as string;
const execScript = (command: string) => ({ script: [{ toolCalls: [{ name: "exec", arguments: { command } }] }, { text: "done" }] });

async function suspended(command: string) {
  const started = await call(`${url(SURVIVOR)}/v1/responses`, cluster.key, { input: execScript(command) });
  expect(started.status, started.text).toBe(200);
  const action = started.body?.requiredAction as { id: string };
  const sessionId = started.body?.sessionId as string;
  // The survivor created the session: its workspace is in the survivor's data directory.
  return { id: started.body?.id as string, sessionId, approvalId: action.id, cwd: join(cluster.dataDirs[SURVIVOR] as string, "workspaces", sessionId) };
}

async function approvalRow(id: string) {
  const [row] = await db.sql`select status::text as status, decided_via::text as via from approvals where id = ${id}`;
  return row as { status: string; via: string | null };
}

async function resolvedEvents(approvalId: string): Promise<number> {
  const [row] = await db.sql`select count(*)::int as n from response_events where type = 'approval.resolved' and data->>'approvalId' = ${approvalId}`;
  return (row as { n: number }).n;
}

/** After the fault: retry on the survivor (200 if the decision was lost, 409 if it had committed) and wait for completion. */
async function retryAndFinish(run: { id: string; sessionId: string; approvalId: string }) {
  const retried = await retrying(
    () => call(`${url(SURVIVOR)}/v1/approvals/${run.approvalId}`, cluster.key, { decision: "approve" }),
    (r) => r.status === 200 || r.status === 409,
  );
  if (retried.status === 409) expect(retried.body?.code).toBe("already_decided");
  else expect(retried.body?.status).toBe("completed");
  const done = await retrying(
    () => call(`${url(SURVIVOR)}/v1/responses/${run.id}?sessionId=${run.sessionId}`, cluster.key),
    (r) => r.body?.status === "completed",
    30_000,
  );
  expect(await resolvedEvents(run.approvalId)).toBe(1);
  const [terminal] = await db.sql`select count(*)::int as n from response_events where response_id = ${run.id} and type = 'response.completed' and data->>'status' = 'completed'`;
  expect((terminal as { n: number }).n).toBe(1);
  return { retried: retried.status, envelope: done.body };
}

describe("fault: a replica dies mid-decision", () => {
  test("killed while its decision transaction waits on the row: nothing applied; the retry elsewhere applies it once", async () => {
    const run = await suspended("echo once >> once.txt");
    // Hold the approval row so the victim's decision blocks inside its transaction.
    const lock = openQuery(cluster.databaseUrl);
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => (locked = r));
    const tx = lock.sql.begin(async (sql) => {
      await sql`select id from approvals where id = ${run.approvalId} for update`;
      locked();
      await held;
    });
    await isLocked;
    const inFlight = call(`${url(VICTIM)}/v1/approvals/${run.approvalId}`, cluster.key, { decision: "approve" });
    await retrying(
      async () => (await db.sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)[0] as { n: number },
      (r) => r.n >= 1,
      15_000,
    );
    await cluster.replicas[VICTIM]?.kill("SIGKILL");
    expect((await inFlight).status).toBe(0); // the client saw the connection die
    release();
    await tx;
    await lock.close();
    // The victim's backend finds its client gone and rolls back: the approval is still pending.
    await retrying(
      async () => (await db.sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`)[0] as { n: number },
      (r) => r.n === 0,
      15_000,
    );
    expect(await approvalRow(run.approvalId)).toEqual({ status: "pending", via: null });
    expect(await resolvedEvents(run.approvalId)).toBe(0);
    const finished = await retryAndFinish(run);
    expect(finished.retried).toBe(200);
    expect(lines(run.cwd, "once.txt")).toBe(1);
    await cluster.restart(VICTIM);
  });

  test("killed after its decision committed (while the approved command runs): the retry is 409 and the run completes once", async () => {
    // Each start of the command is recorded: a second one would show in starts.txt.
    const run = await suspended("echo started >> starts.txt; sleep 1 && echo slow >> slow.txt");
    const inFlight = call(`${url(VICTIM)}/v1/approvals/${run.approvalId}`, cluster.key, { decision: "approve" });
    await retrying(() => approvalRow(run.approvalId), (r) => r.status === "approved", 15_000);
    await cluster.replicas[VICTIM]?.kill("SIGKILL");
    expect((await inFlight).status).toBe(0);
    expect(await resolvedEvents(run.approvalId)).toBe(1);
    const finished = await retryAndFinish(run);
    expect(finished.retried).toBe(409);
    // The command the dead replica started may have finished on its own; it is never started again: the
    // run has completed, so a second start (it would come before the run goes on) would be recorded by now.
    expect(lines(run.cwd, "starts.txt")).toBeLessThanOrEqual(1);
    expect(lines(run.cwd, "slow.txt")).toBeLessThanOrEqual(1);
    await cluster.restart(VICTIM);
  });

  test("killed at random moments of the decision: always all-or-nothing, always completed exactly once", async () => {
    /** How long a decision on the (warm) victim takes to commit, measured on a throwaway run. */
    const commitMs = async (): Promise<number> => {
      const probe = await suspended("true");
      const started = performance.now();
      const answered = call(`${url(VICTIM)}/v1/approvals/${probe.approvalId}`, cluster.key, { decision: "approve" });
      await retrying(() => approvalRow(probe.approvalId), (r) => r.status === "approved", 15_000);
      const elapsed = performance.now() - started;
      await answered;
      return elapsed;
    };
    const outcomes: string[] = [];
    // Kill points spread from "before the request arrives" to "well after the commit".
    for (const fraction of [0, 0.5, 0.9, 1.2, 3]) {
      await commitMs(); // warm up the (re)started victim
      const delayMs = Math.round(fraction * (await commitMs()));
      const run = await suspended("echo r >> r.txt");
      const inFlight = call(`${url(VICTIM)}/v1/approvals/${run.approvalId}`, cluster.key, { decision: "approve" });
      await new Promise((r) => setTimeout(r, delayMs));
      await cluster.replicas[VICTIM]?.kill("SIGKILL");
      const answered = await inFlight;
      // Either nothing (still pending, no event) or everything (decided, exactly one event).
      const row = await retrying(() => approvalRow(run.approvalId), () => true);
      const events = await resolvedEvents(run.approvalId);
      if (row.status === "pending") expect(events).toBe(0);
      else expect({ status: row.status, events }).toEqual({ status: "approved", events: 1 });
      const finished = await retryAndFinish(run);
      outcomes.push(`${delayMs} ms → ${finished.retried === 200 ? "not applied" : "applied"}`);
      if (answered.status === 200) expect(finished.retried).toBe(409);
      expect(lines(run.cwd, "r.txt")).toBeLessThanOrEqual(1);
      if (finished.retried === 200) expect(lines(run.cwd, "r.txt")).toBe(1);
      await cluster.restart(VICTIM);
    }
    console.info(`random kills (kill after → the decision was): ${outcomes.join(", ")}`);
    expect(outcomes).toHaveLength(5);
    await expectAuditPasses(cluster.databaseUrl);
  });
});
