import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabaseUrl } from "../../db/testing";
import { agentsFileJsonSchema, loadAgentsFile, parseAgentsFile } from "../../server/agents/file-config";
import { bootUntilExit, demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { trpcGet, trpcPost } from "./security-helpers";

const dir = mkdtempSync(join(tmpdir(), "countersign-agents-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type TEnvelope = { id: string; sessionId: string; status: string; outputText?: string; requiredAction?: { id: string; risk?: string; requiredApprovals?: number; toolName?: string } };

const exec = (...commands: string[]) => ({ script: [...commands.map((command) => ({ toolCalls: [{ name: "exec", arguments: { command } }] })), { text: "done" }] });

/** The file of these tests: `guarded` asks for every exec, `ops` for none but deletions; `restricted` names its approver. */
function fileWith(guardedExec: "always" | "review" | "never" | string, approverEmail = "nobody@example.com") {
  return {
    builtins: false,
    defaultAgent: "guarded",
    agents: [
      {
        name: "guarded",
        harness: "scripted",
        tools: {
          exec: { approval: guardedExec, predicates: [{ match: [{ argument: "command", regex: "^rm -rf \\./scratch$" }], risk: "low" }] },
          echo: {},
        },
        quorum: { high: 2 },
      },
      {
        name: "ops",
        harness: "scripted",
        tools: { exec: { approval: "never", predicates: [{ match: [{ argument: "command", regex: "^rm\\b" }], risk: "high", approval: "always" }] }, echo: {} },
      },
      { name: "restricted", harness: "scripted", tools: { exec: { approval: "always" } }, approvers: { users: [approverEmail] } },
    ],
  };
}

const write = (path: string, value: unknown) => writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));

describe("a server booted with an agents file", () => {
  const file = join(dir, "agents.json");
  let app: TTestApp;
  let admin: TTestUser;
  const run = async (agent: string, input: unknown, key = admin.apiKey) => (await (await app.api("/v1/responses", { key, body: { agent, input } })).json()) as TEnvelope;
  const approve = async (approvalId: string, key = admin.apiKey) => app.api(`/v1/approvals/${approvalId}`, { key, body: { decision: "approve" } });

  beforeAll(async () => {
    write(file, fileWith("always", "listed.approver@countersign.local"));
    app = await startTestApp({ agentsFile: file });
    admin = await app.user("admin");
  }, 300_000);
  afterAll(async () => {
    await app?.close();
  });

  test("serves exactly the declared agents: the built-in ones are off, an undeclared tool is not given", async () => {
    const res = await app.api("/v1/responses", { key: admin.apiKey, body: { agent: "scripted", input: "hi" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toContain("no agent named scripted");
    const restricted = await run("restricted", { script: [{ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "ok" }] });
    expect(restricted.status).toBe("completed");
    expect(JSON.stringify(await (await app.api(`/v1/responses/${restricted.id}?sessionId=${restricted.sessionId}`, { key: admin.apiKey })).json())).toContain("Unknown tool: echo");
  });

  test("an exec needs approval as the file says; a predicate lowers the risk (and so the quorum)", async () => {
    const plain = await run("guarded", exec("echo hi"));
    expect(plain.status).toBe("requires_action");
    expect(plain.requiredAction?.risk).toBe("medium");
    // `rm -rf` is high risk by the tool's own estimate; the file's predicate lowers it, so no quorum of two.
    const lowered = await run("guarded", exec("rm -rf ./scratch"));
    expect(lowered.status).toBe("requires_action");
    expect(lowered.requiredAction?.risk).toBe("low");
    expect(lowered.requiredAction?.requiredApprovals ?? 1).toBe(1);
    const other = await run("guarded", exec("rm -rf ./elsewhere"));
    expect(other.requiredAction?.risk).toBe("high");
    expect(other.requiredAction?.requiredApprovals).toBe(2);
  });

  test("a predicate forces approval of a tool that otherwise runs without a prompt", async () => {
    const free = await run("ops", exec("echo free"));
    expect(free.status).toBe("completed");
    const forced = await run("ops", exec("rm -f ./nothing"));
    expect(forced.status).toBe("requires_action");
    expect(forced.requiredAction?.risk).toBe("high");
    expect((await approve(forced.requiredAction?.id ?? "")).status).toBe(200);
  });

  test("the same predicate gates an external approval (POST /v1/approvals): a person is asked, at the predicate's risk", async () => {
    const external = async (command: string) =>
      (await (await app.api("/v1/approvals", { key: admin.apiKey, body: { agent: "ops", action: "exec", arguments: { command } } })).json()) as { id: string; status: string };
    expect((await external("echo free")).status).toBe("approved");
    const forced = await external("rm -f ./nothing");
    expect(forced.status).toBe("pending");
    const view = (await (await app.api(`/v1/approvals/${forced.id}`, { key: admin.apiKey })).json()) as { status: string; risk: string };
    expect(view).toMatchObject({ status: "pending", risk: "high" });
  });

  test("an approver list refuses a decider it does not name, and accepts one it names", async () => {
    const operator = await app.user("operator");
    const suspended = await run("restricted", exec("echo x"));
    const refused = await approve(suspended.requiredAction?.id ?? "", operator.apiKey);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toContain('The agent "restricted" accepts decisions only from its approvers');
    const listed = await app.user("operator", "Listed Approver");
    expect(listed.email).toBe("listed.approver@countersign.local");
    expect((await approve(suspended.requiredAction?.id ?? "", listed.apiKey)).status).toBe(200);
  });

  test("a reload changes the policy for the next run only; a run suspended before it keeps its policy", async () => {
    const before = await run("guarded", exec("echo one", "echo two"));
    expect(before.status).toBe("requires_action");
    write(file, fileWith("never"));
    const reloaded = await trpcPost(app, { key: admin.apiKey }, "admin.reloadAgents", undefined);
    expect(reloaded.status).toBe(200);
    expect(JSON.stringify(reloaded.body)).toContain('"ok":true');
    // The reload is one row of the admin trail: who (this admin), from where (the console), which file.
    const trail = await trpcGet(app, { key: admin.apiKey }, "admin.trail", { action: "config.reloaded", limit: 50 });
    expect(trail.status).toBe(200);
    const rows = (trail.body as { result: { data: { rows: Array<Record<string, unknown>> } } }).result.data.rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action: "config.reloaded", targetId: file, channel: "console", actorUserId: admin.userId });
    // The next run: exec runs without a prompt.
    const after = await run("guarded", exec("echo three"));
    expect(after.status).toBe("completed");
    // The run started before: its second exec still asks a person.
    const resumed = (await (await approve(before.requiredAction?.id ?? "")).json()) as TEnvelope;
    expect(resumed.status).toBe("requires_action");
    expect(resumed.requiredAction?.id).not.toBe(before.requiredAction?.id);
    const finished = (await (await approve(resumed.requiredAction?.id ?? "")).json()) as TEnvelope;
    expect(finished.status).toBe("completed");
    // Admins and auditors read the effective configuration; operators may not.
    const view = await trpcGet(app, { key: admin.apiKey }, "admin.agentsConfig");
    expect(JSON.stringify(view.body)).toContain('"approval":"never"');
    const auditor = await app.user("auditor");
    expect((await trpcGet(app, { key: auditor.apiKey }, "admin.agentsConfig")).status).toBe(200);
    expect((await trpcPost(app, { key: auditor.apiKey }, "admin.reloadAgents", undefined)).status).toBe(403);
  });

  test("an invalid file on reload keeps the running configuration and answers the error by JSON path", async () => {
    write(file, fileWith("sometimes"));
    const reloaded = await trpcPost(app, { key: admin.apiKey }, "admin.reloadAgents", undefined);
    expect(reloaded.status).toBe(200);
    const text = JSON.stringify(reloaded.body);
    expect(text).toContain('"ok":false');
    expect(text).toContain("agents[0].tools.exec.approval: expected one of always|never|review");
    expect(app.logs()).toContain("configuration reload failed");
    // Still the last good file: exec runs without a prompt.
    expect((await run("guarded", exec("echo still"))).status).toBe("completed");
    const view = await trpcGet(app, { key: admin.apiKey }, "admin.agentsConfig");
    expect(JSON.stringify(view.body)).toContain("agents[0].tools.exec.approval");
    write(file, "{ not json");
    expect(JSON.stringify((await trpcPost(app, { key: admin.apiKey }, "admin.reloadAgents", undefined)).body)).toContain("is not valid JSON");
    expect((await run("guarded", exec("echo still"))).status).toBe("completed");
    // An action whose schema is not a JSON Schema: refused by its path, nothing changes.
    const badSchema = fileWith("never") as { agents: Array<Record<string, unknown>> };
    (badSchema.agents[0] as Record<string, unknown>).actions = { send_email: { schema: { type: "objekt" } } };
    write(file, badSchema);
    expect(JSON.stringify((await trpcPost(app, { key: admin.apiKey }, "admin.reloadAgents", undefined)).body)).toContain("agents[0].actions.send_email.schema: not a JSON Schema (2020-12):");
    expect((await run("guarded", exec("echo still"))).status).toBe("completed");
  });
});

describe("the file itself", () => {
  test("a bad field is named by its JSON path, every problem at once", () => {
    const bad = fileWith("sometimes") as { agents: Array<Record<string, unknown>> };
    (bad.agents[1] as Record<string, unknown>).tools = { exec: { approval: "never" }, shell: {} };
    (bad.agents[2] as Record<string, unknown>).quorum = { high: "two" };
    // Actions: a schema that is not JSON Schema, a name that is not one, a bad predicate; then (checked
    // once an agent's fields are valid) a host tool's name and `*` beside "declared".
    (bad.agents[2] as Record<string, unknown>).actions = { send_email: { schema: { type: "objekt" } }, "send sms": {}, refund: { predicates: [{ match: [{ argument: "amount", regex: "^1" }], approval: "sometimes" }] } };
    bad.agents.push({ name: "outside", harness: "scripted", tools: { exec: {} }, externalActions: "declared", actions: { exec: {}, "*": {} } });
    let message = "";
    try {
      parseAgentsFile(bad, "agents.json", {});
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain("agents[0].tools.exec.approval: expected one of always|never|review");
    expect(message).toContain("agents[1].tools.shell: unknown tool");
    expect(message).toContain("agents[2].quorum.high:");
    expect(message).toContain("agents[2].actions.send_email.schema: not a JSON Schema (2020-12):");
    expect(message).toContain("agents[2].actions.send sms: must be an action name");
    expect(message).toContain("agents[3].actions.exec: is one of the agent's host tools");
    expect(message).toContain('agents[3].actions.*: has no effect with externalActions "declared"');
    expect(message).toContain("agents[2].actions.refund.predicates[0].approval: expected one of always|never");
  });

  test("docs/agents.schema.json is generated from the zod schema (npm run agents:schema) and the example validates", () => {
    expect(JSON.parse(readFileSync("docs/agents.schema.json", "utf8"))).toEqual(agentsFileJsonSchema());
    const loaded = loadAgentsFile("docs/agents.example.json", { COUNTERSIGN_HOOK_SECRET: "a-secret-of-sixteen-chars" });
    expect(loaded.agents.map((a) => a.name)).toContain("ops");
    expect(loaded.defaultAgent).toBe("ops");
  });
});

describe("the server process", () => {
  const servers: TServerProcess[] = [];
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const s of servers) await s.kill("SIGKILL").catch(() => {});
    for (const d of drops) await d().catch(() => {});
  });

  test("a bad file stops the boot naming the field", async () => {
    const file = join(dir, "bad.json");
    write(file, fileWith("sometimes"));
    const dataDir = mkdtempSync(join(dir, "data-"));
    const { code, output } = await bootUntilExit({ ...process.env, DATABASE_URL: "", COUNTERSIGN_DATA_DIR: dataDir, COUNTERSIGN_PAGES: "off", PORT: "0", HOST: "127.0.0.1", COUNTERSIGN_AGENTS_FILE: file });
    expect(code).toBe(1);
    expect(output).toContain("agents[0].tools.exec.approval: expected one of always|never|review");
    // Refused before the database was opened: nothing was created in the data directory.
    expect(existsSync(join(dataDir, "pglite"))).toBe(false);
  }, 300_000);

  test("SIGHUP reloads the file: the next run follows it; a bad file on SIGHUP keeps the old one", async () => {
    const file = join(dir, "hup.json");
    write(file, { builtins: true, agents: [{ name: "hup", harness: "scripted", tools: { exec: { approval: "always" } } }] });
    const dataDir = mkdtempSync(join(dir, "data-"));
    const database = await createTestDatabaseUrl();
    if (database) drops.push(database.drop);
    const server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url, env: { COUNTERSIGN_AGENTS_FILE: file, LOG_LEVEL: "info" } });
    servers.push(server);
    // The demo credentials are written after the server listens; a loaded machine may take a while.
    await expect.poll(() => existsSync(join(dataDir, "demo-credentials.txt")), { timeout: 300_000, interval: 500 }).toBe(true);
    const key = await demoApiKey(dataDir);
    const start = async () =>
      (await (
        await fetch(`${server.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ agent: "hup", input: exec("echo x") }) })
      ).json()) as TEnvelope;
    expect((await start()).status).toBe("requires_action");
    write(file, { builtins: true, agents: [{ name: "hup", harness: "scripted", tools: { exec: { approval: "never" } } }] });
    server.child.kill("SIGHUP");
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain("configuration reloaded");
    expect((await start()).status).toBe("completed");
    write(file, { agents: [{ name: "hup", harness: "scripted", tools: { exec: { approval: "maybe" } } }] });
    server.child.kill("SIGHUP");
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain("configuration reload failed");
    expect(server.output()).toContain("agents[0].tools.exec.approval");
    expect((await start()).status).toBe("completed");
    expect(server.child.exitCode).toBeNull();
  }, 480_000);
});
