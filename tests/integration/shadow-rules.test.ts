import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import type { TSuggestion } from "../../server/services/policy-suggestions";
import type { TDecisionAnalytics } from "../../server/services/read/analytics";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, ok200, script, settledResponse, type TBody } from "./helpers";
import { trpcGet } from "./runtime-helpers";

/**
 * Shadow rules (docs/analytics.md#shadow-rules): an agent's shadow policy is evaluated beside the
 * live one for every gated request, decides nothing, and where it differs the request records it
 * (an `approval.shadow` event in the run's trajectory) and analytics count it.
 */

const agentsFile = {
  builtins: false,
  defaultAgent: "careful",
  agents: [
    // Live: a person decides every exec; the shadow would let `echo` through.
    { name: "careful", harness: "scripted", tools: { exec: { approval: "always" }, echo: {} }, shadow: { tools: { exec: { predicates: [{ match: [{ argument: "command", regex: "^echo " }], approval: "never" }] } } } },
    // Live: nobody is asked; the shadow would ask a person for deletions.
    { name: "loose", harness: "scripted", tools: { exec: { approval: "never" }, echo: {} }, shadow: { predicates: { exec: [{ match: [{ argument: "command", regex: "^rm " }], approval: "always" }] } } },
  ],
};

let app: TTestApp;
let file: string;
let member: TTestUser;
let operator: TTestUser;
let admin: TTestUser;

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), "cs-shadow-")), "agents.json");
  writeFileSync(file, JSON.stringify(agentsFile));
  app = await startTestApp({ agentsFile: file });
  member = await app.user("member");
  operator = await app.user("operator");
  admin = await app.user("admin");
}, 120_000);
afterAll(async () => {
  await app?.close();
});

const run = async (agent: string, command: string) => ok200(await app.api("/v1/responses", { key: member.apiKey, body: { agent, input: script([execTurn(command), { text: "done" }]) } }));
const eventsOf = async (responseId: string) => {
  const res = await trpcGet(app, operator.apiKey, "audit.trajectory", { responseId });
  return ((res.body.result?.data as { events?: Array<{ type: string; data: Record<string, unknown> }> } | undefined)?.events ?? []).filter((e) => e.type === "approval.shadow");
};

describe(`shadow rules (${testDbKind()})`, () => {
  it("decides nothing, records each difference in the trajectory, and analytics count what the shadow would have let through and what a person denied", async () => {
    const decided: Array<{ env: TBody; decision: "approve" | "deny" }> = [];
    for (const [command, decision] of [
      ["echo a", "approve"],
      ["echo b", "approve"],
      ["echo c", "deny"],
    ] as const) {
      const env = (await run("careful", command)) as TBody & { requiredAction: { id: string } };
      // Live policy still asks: the shadow decided nothing.
      expect(env.status).toBe("requires_action");
      await ok200(await app.api(`/v1/approvals/${env.requiredAction.id}`, { key: operator.apiKey, body: { decision } }));
      decided.push({ env, decision });
    }
    // The shadow agrees here: nothing recorded.
    const same = (await run("careful", "ls")) as TBody & { requiredAction: { id: string } };
    await ok200(await app.api(`/v1/approvals/${same.requiredAction.id}`, { key: operator.apiKey, body: { decision: "approve" } }));
    // An external request of the same agent.
    const external = (await (await app.api("/v1/approvals", { key: member.apiKey, body: { agent: "careful", action: "exec", arguments: { command: "echo ext" } } })).json()) as { id: string; status: string; responseId: string };
    expect(external.status).toBe("pending");
    // The loose agent: live lets it through, the shadow would ask.
    const loose = await run("loose", "rm -rf ./tmp-x");
    expect((await settledResponse(app, member.apiKey, loose)).status).toBe("completed");

    const first = await eventsOf(decided[0]?.env.id ?? "");
    expect(first).toHaveLength(1);
    expect(first[0]?.data).toMatchObject({ toolName: "exec", action: "tool:exec", live: "always", shadow: "never", wouldAutoApprove: true });
    expect(await eventsOf(same.id)).toHaveLength(0);
    expect(await eventsOf(external.responseId)).toHaveLength(1);
    expect((await eventsOf(loose.id))[0]?.data).toMatchObject({ live: "never", shadow: "always", wouldAutoApprove: false });

    const figures = (await ok200(await app.api("/v1/analytics/decisions", { key: operator.apiKey }))) as unknown as TDecisionAnalytics;
    // Decided: a, b, c (asked); the external one still waits; the loose deletion (policy).
    expect(figures.shadow).toEqual({ differed: 4, wouldAutoApprove: 3, wouldAutoApproveDenied: 1, wouldAutoApproveEdited: 0, wouldAsk: 1 });
    const onlyCareful = (await ok200(await app.api("/v1/analytics/decisions?agent=careful", { key: operator.apiKey }))) as unknown as TDecisionAnalytics;
    expect(onlyCareful.shadow).toMatchObject({ differed: 3, wouldAsk: 0 });
  });

  it("switching a shadow to live is a suggestion: its evidence, and once applied the shadow's rules decide", async () => {
    const list = ((await ok200(await app.api("/v1/policy/suggestions", { key: operator.apiKey }))) as unknown as { suggestions: TSuggestion[] }).suggestions;
    const promote = list.find((x) => x.kind === "promote" && x.agent === "careful");
    expect(promote).toMatchObject({ target: "agents[careful].shadow", appliable: true, shadow: { differed: 3, wouldAutoApprove: 3, wouldAutoApproveDenied: 1 } });
    expect(promote?.evidence.summary).toContain("1 of them a person denied");
    await ok200(await app.api(`/v1/policy/suggestions/${promote?.id}/apply`, { key: admin.apiKey, body: {} }));
    const now = JSON.parse(readFileSync(file, "utf8")) as { agents: Array<{ name: string; shadow?: unknown; tools: { exec: { approval: string; predicates?: unknown[] } } }> };
    const careful = now.agents.find((a) => a.name === "careful");
    expect(careful?.shadow).toBeUndefined();
    expect(careful?.tools.exec).toEqual({ approval: "always", predicates: [{ match: [{ argument: "command", regex: "^echo " }], approval: "never" }] });
    // The shadow's rule is live: `echo` runs without a person now, anything else still asks.
    expect((await settledResponse(app, member.apiKey, await run("careful", "echo now-live"))).status).toBe("completed");
    expect((await run("careful", "ls -la")).status).toBe("requires_action");
  });
});
