import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { invokeApproval, ok200 } from "./helpers";
import { trpcGet } from "./runtime-helpers";

let app: TTestApp;
let member: TTestUser;
let otherMember: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  member = await app.user("member");
  otherMember = await app.user("member");
  operator = await app.user("operator", "Olga Operator");
  auditor = await app.user("auditor");
});
afterAll(async () => {
  await app?.close();
});

type TOutcome = { id: string; status: string; decidedBy: string | null; decidedByName: string | null; decidedVia: string | null; decidedAt: string | null };
const outcomes = async (key: string, ids: string[]) => {
  const res = await trpcGet(app, key, "approvals.list", { status: "decided", ids });
  return { status: res.status, rows: (res.body.result?.data ?? []) as TOutcome[] };
};

// The console asks how the cards it was showing were settled, to say who decided what, when and how.
describe(`approvals.list by id: how given approvals were settled (${testDbKind()})`, () => {
  it("names the decider and the channel, lists only settled approvals among the ids, and keeps each role's scope", async () => {
    const decided = await invokeApproval(app, member.apiKey, "echo decided-by-operator");
    const pending = await invokeApproval(app, member.apiKey, "echo still-pending");
    const unrelated = await invokeApproval(app, member.apiKey, "echo not-asked-for");
    await ok200(await app.api(`/v1/approvals/${decided.approval.id}`, { key: operator.apiKey, body: { decision: "deny" } }));
    await ok200(await app.api(`/v1/approvals/${unrelated.approval.id}`, { key: operator.apiKey, body: { decision: "deny" } }));

    const ids = [decided.approval.id, pending.approval.id];
    for (const key of [operator.apiKey, auditor.apiKey, member.apiKey]) {
      const { status, rows } = await outcomes(key, ids);
      expect(status).toBe(200);
      expect(rows.map((r) => r.id)).toEqual([decided.approval.id]);
      expect(rows[0]).toMatchObject({ status: "denied", decidedBy: operator.userId, decidedByName: "Olga Operator", decidedVia: "http" });
      expect(Date.parse(rows[0]?.decidedAt ?? "")).not.toBeNaN();
    }
    // Another member's approvals stay invisible, by id as in the list.
    expect((await outcomes(otherMember.apiKey, ids)).rows).toEqual([]);
    // Only the ids asked for: the other settled approval appears when it is asked for.
    expect((await outcomes(operator.apiKey, [unrelated.approval.id])).rows.map((r) => r.id)).toEqual([unrelated.approval.id]);
  });

  it("refuses empty or oversized id lists", async () => {
    expect((await trpcGet(app, operator.apiKey, "approvals.list", { status: "decided", ids: [] })).status).toBe(400);
    const many = Array.from({ length: 51 }, (_, i) => `approval_${i}`);
    expect((await trpcGet(app, operator.apiKey, "approvals.list", { status: "decided", ids: many })).status).toBe(400);
  });
});
