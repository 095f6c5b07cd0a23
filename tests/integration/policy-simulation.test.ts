import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startControlServer } from "../../server/api/http/control";
import type { TSimulation } from "../../server/services/policy-simulation";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { cli, json, jsonError } from "./cli-helpers";
import { execTurn, expectError, ok200, script, settledResponse, type TBody } from "./helpers";
import { trpcGet, trpcPost } from "./runtime-helpers";

/**
 * Policy simulation (docs/analytics.md#policy-simulation) through `/v1`, tRPC and the CLI: the
 * window's requests, made and decided through the public API, replayed through candidate files.
 * Every figure is what this test did, counted by hand.
 */

const live = {
  builtins: false,
  defaultAgent: "ops",
  agents: [{ name: "ops", harness: "scripted", tools: { exec: { approval: "always", predicates: [{ match: [{ argument: "command", regex: "^echo auto" }], approval: "never" }] }, echo: {} } }],
};
/** The live file with the exec policy replaced. */
const candidate = (exec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ ...live, agents: [{ ...live.agents[0], tools: { exec, echo: {} }, ...extra }] });

let app: TTestApp;
let dir: string;
let member: TTestUser;
let operator: TTestUser;
let admin: TTestUser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cs-simulate-"));
  writeFileSync(join(dir, "agents.json"), JSON.stringify(live));
  app = await startTestApp({ agentsFile: join(dir, "agents.json") });
  member = await app.user("member");
  operator = await app.user("operator");
  admin = await app.user("admin");
  const asked = async (command: string) => {
    const env = (await ok200(await app.api("/v1/responses", { key: member.apiKey, body: { input: script([execTurn(command), { text: "done" }]) } }))) as TBody & { requiredAction: { id: string } };
    expect(env.status).toBe("requires_action");
    return env.requiredAction.id;
  };
  const decide = async (id: string, body: Record<string, unknown>) => ok200(await app.api(`/v1/approvals/${id}`, { key: operator.apiKey, body }));
  // Three approved as asked, one denied, one approved after an edit; two the policy let through.
  for (let i = 0; i < 3; i++) await decide(await asked("echo one"), { decision: "approve" });
  await decide(await asked("echo two"), { decision: "deny" });
  await decide(await asked("echo three"), { decision: "approve", arguments: { command: "echo three, edited" } });
  for (let i = 0; i < 2; i++) {
    const env = await ok200(await app.api("/v1/responses", { key: member.apiKey, body: { input: script([execTurn("echo auto"), { text: "done" }]) } }));
    expect((await settledResponse(app, member.apiKey, env)).status).toBe("completed");
  }
}, 120_000);
afterAll(async () => {
  await app?.close();
});

const simulate = async (file: unknown, key = operator.apiKey, days = 14) => (await ok200(await app.api("/v1/policy/simulate", { key, body: { file, days } }))) as unknown as TSimulation;
const decided = async () => ((await ok200(await app.api("/v1/approvals?status=decided", { key: admin.apiKey }))) as unknown as { approvals: unknown[] }).approvals.length;

describe(`policy simulation (${testDbKind()})`, () => {
  it("a candidate that lets every exec through lists the denied and the edited request as dangerous, and changes nothing", async () => {
    const before = await decided();
    const result = await simulate(candidate({ approval: "never" }));
    expect(result.requests).toBe(7);
    expect(result.totals).toMatchObject({ nowWithoutPerson: 5, nowWithoutPersonDenied: 1, nowWithoutPersonEdited: 1, nowAsksPerson: 0, unchanged: 2, unavailable: 0 });
    expect(result.rows[0]).toMatchObject({ agent: "ops", action: "tool:exec", requests: 7, nowWithoutPerson: 5 });
    expect(result.dangerous.map((d) => [d.outcome, (d.arguments as { command: string }).command]).sort()).toEqual([
      ["denied", "echo two"],
      ["edited", "echo three"],
    ]);
    expect(await decided()).toBe(before);
    // The only write: a trail row naming who simulated what.
    const trail = await trpcGet(app, admin.apiKey, "admin.trail", { limit: 50, action: "policy.simulated" });
    const rows = (trail.body.result?.data as { rows: Array<{ actorUserId: string; detail: Record<string, unknown> }> } | undefined)?.rows ?? [];
    expect(rows[0]).toMatchObject({ actorUserId: operator.userId, detail: { days: 14, agents: ["ops"], requests: 7, nowWithoutPerson: 5, dangerous: 2 } });
  });

  it("a stricter candidate asks for what the policy let through; approvers and a quorum that would refuse past decisions are counted", async () => {
    const strict = await simulate(candidate({ approval: "always" }));
    expect(strict.totals).toMatchObject({ nowWithoutPerson: 0, nowAsksPerson: 2, unchanged: 5 });
    // Only another person may decide, and `echo one` becomes high risk needing two approvers.
    const approvers = await simulate(candidate({ approval: "always", predicates: [{ match: [{ argument: "command", regex: "^echo one$" }], risk: "high" }] }, { approvers: { users: ["nobody@example.com"] }, quorum: { high: 2 } }), admin.apiKey);
    expect(approvers.totals).toMatchObject({ deciderRefused: 5, quorumRaised: 3, nowAsksPerson: 2 });
    // The live file itself: nothing changes.
    expect((await simulate(live)).totals).toMatchObject({ nowWithoutPerson: 0, nowAsksPerson: 0, unchanged: 7, deciderRefused: 0, quorumRaised: 0 });
    // An agent the candidate does not have.
    const other = await simulate({ builtins: false, agents: [{ name: "other", harness: "scripted", tools: { exec: { approval: "never" } } }] });
    expect(other.totals).toMatchObject({ unavailable: 7, nowWithoutPerson: 0 });
  });

  it("tRPC and the CLI give the same replay; bad input is a clear error that records nothing; members may not", async () => {
    const file = candidate({ approval: "never" });
    const viaTrpc = await trpcPost(app, admin.apiKey, "policy.simulate", { file, days: 14 });
    expect((viaTrpc.body.result?.data as TSimulation | undefined)?.totals).toMatchObject({ nowWithoutPerson: 5, nowWithoutPersonDenied: 1 });
    // The CLI reaches this server through its control socket, as it reaches `npm start`'s.
    const control = await startControlServer(app.deps, app.dataDir);
    const path = join(dir, "candidate.json");
    writeFileSync(path, JSON.stringify(file));
    const printed = json(await cli(app.dataDir, undefined, ["policy", "simulate", path, "--days", "14", "--json"]));
    expect(printed.database).toContain("through the running server");
    expect(printed).toMatchObject({ requests: 7, nowWithoutPerson: 5, nowWithoutPersonDenied: 1, nowWithoutPersonEdited: 1 });
    expect(jsonError(await cli(app.dataDir, undefined, ["policy", "simulate", path, "--days", "400", "--json"])).message).toContain("1 to 365");
    writeFileSync(join(dir, "broken.json"), "{ not json");
    expect(jsonError(await cli(app.dataDir, undefined, ["policy", "simulate", join(dir, "broken.json"), "--json"])).message).toContain("Cannot read the candidate agents file");
    await control?.close();

    const trailCount = async () => ((await trpcGet(app, admin.apiKey, "admin.trail", { limit: 200, action: "policy.simulated" })).body.result?.data as { rows: unknown[] } | undefined)?.rows.length;
    const count = await trailCount();
    const invalid = await expectError(await app.api("/v1/policy/simulate", { key: operator.apiKey, body: { file: { agents: [{ name: "x", harness: "scripted", tools: { exec: { approval: "sometimes" } } }] } } }), 422, "validation_failed");
    expect(invalid.detail).toContain("agents[0].tools.exec.approval");
    await expectError(await app.api("/v1/policy/simulate", { key: operator.apiKey, body: { file, days: 400 } }), 400, "invalid_request");
    await expectError(await app.api("/v1/policy/simulate", { key: member.apiKey, body: { file } }), 403, "forbidden");
    expect(await trailCount()).toBe(count);
  });
});
