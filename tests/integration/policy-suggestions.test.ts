import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import type { TSuggestion } from "../../server/services/policy-suggestions";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, expectError, ok200, script, settledResponse, type TBody } from "./helpers";
import { trpcGet, trpcPost } from "./runtime-helpers";

/**
 * Rule suggestions from history (docs/analytics.md#rule-suggestions), through `/v1` and tRPC:
 * what people decided, made through the public API, proposes the change; an admin applies it
 * (the file, its backup, the trail, the next run's gate) or dismisses it.
 */

const agentsFile = {
  builtins: false,
  defaultAgent: "ops",
  agents: [{ name: "ops", harness: "scripted", tools: { exec: { approval: "always" }, echo: {} }, grants: { session: false } }],
};

let app: TTestApp;
let file: string;
let member: TTestUser;
let operator: TTestUser;
let admin: TTestUser;

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), "cs-suggest-")), "agents.json");
  writeFileSync(file, JSON.stringify(agentsFile, null, 2));
  app = await startTestApp({ agentsFile: file });
  member = await app.user("member");
  operator = await app.user("operator");
  admin = await app.user("admin");
}, 120_000);
afterAll(async () => {
  await app?.close();
});

const run = async (command: string) => ok200(await app.api("/v1/responses", { key: member.apiKey, body: { input: script([execTurn(command), { text: "done" }]) } }));
/** Asks for `command` and has `by` decide it, `times` times (the deciders take turns). */
async function decided(command: string, times: number, by: TTestUser[], decision: "approve" | "deny" = "approve"): Promise<TBody[]> {
  const envs: TBody[] = [];
  for (let i = 0; i < times; i++) {
    const env = (await run(command)) as TBody & { requiredAction: { id: string } };
    expect(env.status).toBe("requires_action");
    await ok200(await app.api(`/v1/approvals/${env.requiredAction.id}`, { key: (by[i % by.length] as TTestUser).apiKey, body: { decision } }));
    envs.push(env);
  }
  return envs;
}
const suggestions = async (key = operator.apiKey, query = "") => ((await ok200(await app.api(`/v1/policy/suggestions${query}`, { key }))) as unknown as { suggestions: TSuggestion[] }).suggestions;
const about = (list: TSuggestion[], command: string) => list.filter((s) => (s.arguments as { command?: string }).command === command);

describe(`policy suggestions (${testDbKind()})`, () => {
  it("proposes no rule for a request approved 42 times once a person denied it; proposes one when 42 approvals by two people stand", async () => {
    await decided("git status", 42, [operator, admin]);
    const before = about(await suggestions(), "git status");
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({
      kind: "loosen",
      agent: "ops",
      action: "tool:exec",
      toolName: "exec",
      target: "agents[ops].tools.exec.predicates",
      predicate: { match: [{ argument: "command", regex: "^git status$" }], approval: "never" },
      evidence: { requests: 42, approved: 42, denied: 0, people: 2, days: 14 },
      appliable: true,
    });
    expect(before[0]?.evidence.summary).toContain("42 of 42 approved as asked by 2 people");
    expect(before[0]?.evidence.matched).toHaveLength(10);
    expect(before[0]?.diff).toMatch(/^\+\s+"regex": "\^git status\$"/m);
    // One denial of the same request: no loosening any more.
    await decided("git status", 1, [operator], "deny");
    expect(about(await suggestions(), "git status")).toEqual([]);
  });

  it("an admin applies one: the file rewritten with the previous one kept, the trail row, the next run not asked; applying again is a conflict", async () => {
    await decided("git log -1", 20, [operator, admin]);
    const [suggestion] = about(await suggestions(), "git log -1");
    expect(suggestion?.kind).toBe("loosen");
    const id = suggestion?.id ?? "";
    const previous = readFileSync(file, "utf8");
    chmodSync(file, 0o640);
    // Only admins apply.
    await expectError(await app.api(`/v1/policy/suggestions/${id}/apply`, { key: operator.apiKey, body: {} }), 403, "forbidden");
    const applied = (await ok200(await app.api(`/v1/policy/suggestions/${id}/apply`, { key: admin.apiKey, body: {} }))) as unknown as { backup: string; reload: { ok: boolean } };
    expect(applied.reload.ok).toBe(true);
    expect(readFileSync(applied.backup, "utf8")).toBe(previous);
    // The rewritten file keeps its permissions (another process may read it).
    expect(statSync(file).mode & 0o777).toBe(0o640);
    const now = JSON.parse(readFileSync(file, "utf8")) as typeof agentsFile & { agents: Array<{ tools: { exec: { predicates: unknown[] } } }> };
    expect(now.agents[0]?.tools.exec.predicates).toEqual([{ match: [{ argument: "command", regex: "^git log -1$" }], approval: "never" }]);
    // The next run of exactly that command is not asked; a different one still is.
    const next = await run("git log -1");
    expect((await settledResponse(app, member.apiKey, next)).status).toBe("completed");
    expect((await run("git log -2")).status).toBe("requires_action");
    const trail = await trpcGet(app, admin.apiKey, "admin.trail", { limit: 20, action: "policy.suggestion_applied" });
    const rows = (trail.body.result?.data as { rows: Array<{ actorUserId: string; targetId: string; detail: Record<string, unknown> }> } | undefined)?.rows;
    expect(rows).toHaveLength(1);
    expect(rows?.[0]).toMatchObject({ actorUserId: admin.userId, targetId: "ops", detail: { suggestion: id, kind: "loosen", backup: applied.backup, requests: 20 } });
    // Applied twice: the file changed since the suggestion.
    await expectError(await app.api(`/v1/policy/suggestions/${id}/apply`, { key: admin.apiKey, body: {} }), 409, "conflict");
    expect(about(await suggestions(), "git log -1")).toEqual([]);
  });

  it("dismissing keeps it away for that window; a file changed on disk since the suggestion is a conflict that changes nothing", async () => {
    await decided("uptime", 20, [operator, admin]);
    const [suggestion] = about(await suggestions(), "uptime");
    const id = suggestion?.id ?? "";
    // The file edited by hand meanwhile: the suggestion no longer describes it.
    const edited = `${readFileSync(file, "utf8").trimEnd()}\n\n`;
    writeFileSync(file, edited);
    await expectError(await app.api(`/v1/policy/suggestions/${id}/apply`, { key: admin.apiKey, body: {} }), 409, "conflict");
    expect(readFileSync(file, "utf8")).toBe(edited);
    const [fresh] = about(await suggestions(), "uptime");
    expect(fresh?.id).not.toBe(id);
    // Dismissed (tRPC): gone from this window, still offered from another.
    await expectError(await app.api(`/v1/policy/suggestions/${fresh?.id}/dismiss`, { key: operator.apiKey, body: {} }), 403, "forbidden");
    const dismissed = await trpcPost(app, admin.apiKey, "policy.dismissSuggestion", { id: fresh?.id, days: 14 });
    expect(dismissed.status).toBe(200);
    expect(about(await suggestions(), "uptime")).toEqual([]);
    expect(about(await suggestions(operator.apiKey, "?days=30"), "uptime")).toHaveLength(1);
    expect(readFileSync(file, "utf8")).toBe(edited);
  });

  it("proposes asking more for a request every person denied; refuses bad input and members", async () => {
    await decided("rm -rf /srv/data", 5, [operator, admin], "deny");
    const [tighten] = about(await suggestions(), "rm -rf /srv/data");
    expect(tighten).toMatchObject({ kind: "tighten", predicate: { match: [{ argument: "command", regex: "^rm -rf \\/srv\\/data$" }], risk: "high", approval: "always" }, evidence: { requests: 5, denied: 5, people: 2 } });
    await expectError(await app.api("/v1/policy/suggestions?days=400", { key: operator.apiKey }), 400, "invalid_request");
    await expectError(await app.api("/v1/policy/suggestions?days=zero", { key: operator.apiKey }), 400, "invalid_request");
    await expectError(await app.api("/v1/policy/suggestions", { key: member.apiKey }), 403, "forbidden");
    await expectError(await app.api("/v1/policy/suggestions/sug_00000000_0000000000000000/apply", { key: admin.apiKey, body: {} }), 409, "conflict");
    await expectError(await app.api("/v1/policy/suggestions/nonsense/apply", { key: admin.apiKey, body: {} }), 404, "not_found");
    const viaTrpc = await trpcGet(app, operator.apiKey, "policy.suggestions", { days: 14 });
    expect((viaTrpc.body.result?.data as TSuggestion[] | undefined)?.map((s) => s.id)).toEqual((await suggestions()).map((s) => s.id));
    expect(readdirSync(join(file, "..")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(existsSync(file)).toBe(true);
  });
});

describe(`policy suggestions without an agents file (${testDbKind()})`, () => {
  let bare: TTestApp;
  beforeAll(async () => {
    bare = await startTestApp();
  }, 120_000);
  afterAll(async () => {
    await bare?.close();
  });

  it("offers the change as a file to download, and refuses to apply it", async () => {
    const [asker, one, two] = [await bare.user("member"), await bare.user("operator"), await bare.user("admin")];
    for (let i = 0; i < 20; i++) {
      const env = (await ok200(await bare.api("/v1/responses", { key: asker.apiKey, body: { input: script([execTurn("date"), { text: "done" }]) } }))) as TBody & { requiredAction: { id: string } };
      await ok200(await bare.api(`/v1/approvals/${env.requiredAction.id}`, { key: (i % 2 ? one : two).apiKey, body: { decision: "approve" } }));
    }
    const list = ((await ok200(await bare.api("/v1/policy/suggestions", { key: two.apiKey }))) as unknown as { suggestions: TSuggestion[] }).suggestions;
    expect(list).toHaveLength(1);
    const [s] = list;
    expect(s).toMatchObject({ agent: "scripted", appliable: false, diff: null, target: null });
    expect(s?.reason).toContain("no agents file");
    const offered = s?.file as { agents: Array<{ name: string; tools: { exec: { approval: string; predicates: unknown[] } } }> };
    expect(offered.agents[0]?.name).toBe("scripted");
    expect(offered.agents[0]?.tools.exec).toEqual({ approval: "always", predicates: [{ match: [{ argument: "command", regex: "^date$" }], approval: "never" }] });
    await expectError(await bare.api(`/v1/policy/suggestions/${s?.id}/apply`, { key: two.apiKey, body: {} }), 409, "conflict");
  });
});
