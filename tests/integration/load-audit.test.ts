import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { auditDatabase, formatAudit } from "../../scripts/load/audit";
import { runLoad } from "../../scripts/load/run";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invokeApproval, rows, waitUntil } from "./helpers";

/**
 * The audit `npm run load` ends with: it passes on a database the load just exercised, and it
 * catches each kind of damage it is meant to catch (so a passing audit means something).
 */
let app: TTestApp;
let alice: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  alice = await app.user("operator");
});
afterAll(async () => {
  await app?.close();
});

const audit = () => auditDatabase((text) => rows(app, text));

/**
 * Waits until no attempt of the response runs on the server any more and it holds no lease: what an
 * attempt writes after its boundary (its lifecycle events) is written by then. (Not "the trajectory
 * did not grow for 150 ms", which a pause of a loaded machine fakes.)
 */
async function settled(responseId: string): Promise<void> {
  await waitUntil(async () => {
    if (app.deps.host.isLocal(responseId)) return false;
    const [row] = await rows<{ lease_owner: string | null }>(app, `select lease_owner from responses where id = '${responseId}'`);
    return row !== undefined && row.lease_owner === null;
  }, 30_000, `response ${responseId} to settle`);
}
const failing = async () => (await audit()).checks.filter((c) => !c.ok).map((c) => c.name);
const exec = (sql: string) => rows(app, sql);

describe(`load audit (${testDbKind()})`, () => {
  test("a short load run passes the audit, with every flow finished and every approved command run once", async () => {
    const result = await runLoad({ urls: [app.url], key: alice.apiKey, sessions: 24, concurrency: 6, durationMs: 60_000, duplicateShare: 0.5, dataDirs: [app.dataDir] });
    expect(result.errors).toEqual({});
    expect(result.outcomes.completed + result.outcomes.denied).toBe(24);
    expect(result.races).toBe(result.racesWithOneWinner);
    expect(result.sideEffects.violations).toEqual([]);
    expect(result.sideEffects.checked).toBe(result.flows.filter((f) => f.kind === "approval").length);
    const report = await audit();
    expect(report.ok, formatAudit(report).join("\n")).toBe(true);
    expect(Object.values(report.counts.responses).reduce((a, b) => a + b, 0)).toBe(24);
  });

  test("it catches a decision applied twice, a gap in a trajectory, a run stuck without a lease and a half-applied terminal run", async () => {
    // A decision consumed twice: a second approval.resolved event for a decided approval.
    const twice = await invokeApproval(app, alice.apiKey, "true");
    await app.api(`/v1/approvals/${twice.approval.id}`, { key: alice.apiKey, body: { decision: "approve" } });
    await settled(twice.env.id);
    expect(await failing()).toEqual([]);
    const [next] = await exec(`select next_seq from responses where id = '${twice.env.id}'`);
    await exec(
      `insert into response_events (response_id, session_id, seq, type, data) values ('${twice.env.id}', '${twice.env.sessionId}', ${Number(next?.next_seq)}, 'approval.resolved', '{"approvalId":"${twice.approval.id}","decision":"approve"}')`,
    );
    await exec(`update responses set next_seq = next_seq + 1 where id = '${twice.env.id}'`);
    expect(await failing()).toEqual(["each decided approval has exactly one approval.resolved event with its decision; undecided ones have none", "no approval decided twice (approval.resolved events per approval id ≤ 1) and none for an unknown approval"]);
    await exec(`delete from response_events where response_id = '${twice.env.id}' and seq = ${Number(next?.next_seq)}`);
    await exec(`update responses set next_seq = next_seq - 1 where id = '${twice.env.id}'`);
    expect(await failing()).toEqual([]);

    // A gap in a trajectory.
    await exec(`update response_events set seq = seq + 1000 where response_id = '${twice.env.id}' and seq = 1`);
    expect(await failing()).toEqual(["seq and frame_seq are contiguous from 0 per response and match next_seq / next_frame_seq"]);
    await exec(`update response_events set seq = 1 where response_id = '${twice.env.id}' and seq = 1001`);

    // A run stuck in_progress with no live lease.
    const stuck = await invokeApproval(app, alice.apiKey, "true");
    await settled(stuck.env.id);
    await exec(`update approvals set status = 'approved', decided_by = '${alice.userId}', decided_at = now(), decided_via = 'http' where id = '${stuck.approval.id}'`);
    await exec(`update responses set status = 'in_progress', lease_owner = null, lease_expires_at = null where id = '${stuck.env.id}'`);
    const found = await failing();
    expect(found).toContain("every run is terminal, waiting on exactly one pending action, or executing under a live lease");
    expect(found).toContain("each decided approval has exactly one approval.resolved event with its decision; undecided ones have none");
    await exec(`update approvals set status = 'cancelled' where id = '${stuck.approval.id}'`);
    await exec(`update responses set status = 'requires_action' where id = '${stuck.env.id}'`);

    // A terminal run with its approval still pending (half-applied), and without its terminal frame.
    await exec(`update approvals set status = 'pending', decided_by = null, decided_at = null, decided_via = null where id = '${stuck.approval.id}'`);
    await exec(`update responses set status = 'completed' where id = '${stuck.env.id}'`);
    expect(await failing()).toEqual([
      "terminal runs store their envelope and end with exactly one terminal response.completed frame",
      "nothing is left pending or running under a terminal run (no half-applied state)",
    ]);
  });
});
