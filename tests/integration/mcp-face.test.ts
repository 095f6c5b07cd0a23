import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { actionsAgentsFile } from "./actions-helpers";

/**
 * Issue 19 point 4: `/v1/mcp`, Countersign as an MCP server, through the official SDK's client:
 * request_approval, ask_user and approval_prompt, decided by another user over /v1.
 */
let app: TTestApp;
let alice: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  // The built-in agents plus `coder`, whose coding tools have their own policy (actions-helpers.ts).
  app = await startTestApp({ agentsFile: actionsAgentsFile() });
  [alice, operator] = await Promise.all([app.user("member", "Alice"), app.user("operator", "Olga Operator")]);
  // Migrations on a fresh database can take long on a busy machine.
}, 180_000);
afterAll(async () => {
  await app?.close();
});

async function connect(key?: string, agent?: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  const url = new URL(`${app.url}/v1/mcp${agent ? `?agent=${encodeURIComponent(agent)}` : ""}`);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} } });
  await client.connect(transport);
  return client;
}

type TToolResult = { content: Array<{ type: string; text: string }>; isError?: boolean };
const parsed = (r: unknown) => JSON.parse((r as TToolResult).content[0]?.text ?? "null") as Record<string, unknown>;

type TPendingItem = { id: string; user: string; agent: string; action: string; toolName: string; arguments: Record<string, unknown> };

/** Alice's pending approvals, as the operator lists them, once there are `n` (waits for them to appear). */
async function pendingOfAliceN(n: number): Promise<TPendingItem[]> {
  let mine: TPendingItem[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await app.api("/v1/approvals?status=pending", { key: operator.apiKey });
    const { approvals } = (await res.json()) as { approvals: TPendingItem[] };
    mine = approvals.filter((a) => a.user === "Alice");
    if (mine.length >= n) return mine;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${mine.length} of ${n} pending approvals of Alice's appeared`);
}

/** The newest pending approval of Alice's (waits for it to appear). */
const pendingOfAlice = async (): Promise<TPendingItem> => (await pendingOfAliceN(1))[0] as TPendingItem;

describe(`MCP server face /v1/mcp (${testDbKind()})`, () => {
  it("refuses a client without an API key (401) and creates nothing", async () => {
    await expect(connect()).rejects.toThrow(/401|Authentication/);
    const res = await app.api("/v1/approvals?status=pending", { key: operator.apiKey });
    expect(((await res.json()) as { approvals: unknown[] }).approvals).toHaveLength(0);
  });

  it("lists the three tools; request_approval waits for the decision and answers the (edited) arguments", async () => {
    const client = await connect(alice.apiKey);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["approval_prompt", "ask_user", "request_approval"]);
      const call = client.callTool({ name: "request_approval", arguments: { action: "exec", arguments: { command: "make deploy" }, timeoutSeconds: 30 } });
      const pending = await pendingOfAlice();
      expect(pending.arguments).toEqual({ command: "make deploy" });
      const decided = await app.api(`/v1/approvals/${pending.id}`, { key: operator.apiKey, body: { decision: "approve", arguments: { command: "make deploy ENV=staging" } } });
      expect(decided.status).toBe(200);
      const result = await call;
      expect(parsed(result)).toMatchObject({ id: pending.id, status: "approved", edited: true, arguments: { command: "make deploy ENV=staging" } });
      // The tool's answer was its one use: the approval is consumed.
      const view = (await (await app.api(`/v1/approvals/${pending.id}`, { key: alice.apiKey })).json()) as { consumed: boolean };
      expect(view.consumed).toBe(true);
      // An action name that is not one is a tool error naming the rule, and creates nothing.
      const unknown = (await client.callTool({ name: "request_approval", arguments: { action: "launch missiles", arguments: {} } })) as TToolResult;
      expect(unknown.isError).toBe(true);
      expect(unknown.content[0]?.text).toContain("A–Z a–z 0–9 _ . : / -");
    } finally {
      await client.close();
    }
  });

  it("approval_prompt: every coding tool is an action of the named agent; the approver sees the complete input, and allow answers exactly what was approved", async () => {
    const inputs: Record<string, Record<string, unknown>> = {
      Bash: { command: "npm test -- --watch=false", description: "Run the tests", timeout: 120000, run_in_background: false, dangerouslyDisableSandbox: true },
      Write: { file_path: "/repo/src/new.ts", content: "export const answer = 42;\n" },
      Edit: { file_path: "/repo/src/a.ts", old_string: "const a = 1;", new_string: "const a = 2;", replace_all: false },
      MultiEdit: { file_path: "/repo/src/b.ts", edits: [{ old_string: "foo", new_string: "bar" }, { old_string: "x", new_string: "y", replace_all: true }] },
      NotebookEdit: { notebook_path: "/repo/analysis.ipynb", cell_id: "c1", new_source: "print(1)", cell_type: "code", edit_mode: "replace" },
      Glob: { pattern: "**/*.ts", path: "/repo" },
      Grep: { pattern: "TODO", path: "/repo", glob: "*.ts", output_mode: "content", "-n": true },
      WebFetch: { url: "https://example.test/docs", prompt: "Summarize the install steps" },
      WebSearch: { query: "countersign approvals", allowed_domains: ["example.test"] },
      Task: { description: "Find callers", prompt: "Find every caller of parseBody", subagent_type: "general-purpose" },
      mcp__github__create_issue: { owner: "acme", repo: "app", title: "Flaky test", body: "See CI run 42" },
    };
    const client = await connect(alice.apiKey, "coder");
    try {
      const calls = Object.entries(inputs).map(([tool_name, input]) => client.callTool({ name: "approval_prompt", arguments: { tool_name, input } }));
      // No tool has a policy of its own but Bash and Read here: each asks a person (the default), none is denied unasked.
      const pending = await pendingOfAliceN(Object.keys(inputs).length);
      for (const [tool, input] of Object.entries(inputs)) {
        const item = pending.find((p) => p.toolName === tool);
        expect(item, tool).toMatchObject({ agent: "coder", action: `coding:${tool}`, arguments: input });
      }
      // The approver edits Bash (the whole input, flags included); the others are approved as asked.
      const bash = pending.find((p) => p.toolName === "Bash") as TPendingItem;
      const editedBash = { ...inputs.Bash, command: "npm test -- --watch=false --bail", dangerouslyDisableSandbox: false };
      expect((await app.api(`/v1/approvals/${bash.id}`, { key: operator.apiKey, body: { decision: "approve", arguments: editedBash } })).status).toBe(200);
      for (const item of pending.filter((p) => p !== bash)) expect((await app.api(`/v1/approvals/${item.id}`, { key: operator.apiKey, body: { decision: "approve" } })).status).toBe(200);
      const answers = (await Promise.all(calls)).map(parsed);
      Object.keys(inputs).forEach((tool, i) => {
        expect(answers[i], tool).toEqual({ behavior: "allow", updatedInput: tool === "Bash" ? editedBash : inputs[tool] });
      });

      // The agent's policy: `git status` and reads need nobody; anything else of Bash asks.
      expect(parsed(await client.callTool({ name: "approval_prompt", arguments: { tool_name: "Bash", input: { command: "git status" } } }))).toEqual({ behavior: "allow", updatedInput: { command: "git status" } });
      expect(parsed(await client.callTool({ name: "approval_prompt", arguments: { tool_name: "Read", input: { file_path: "/repo/README.md", limit: 20 } } }))).toEqual({
        behavior: "allow",
        updatedInput: { file_path: "/repo/README.md", limit: 20 },
      });
      const denyCall = client.callTool({ name: "approval_prompt", arguments: { tool_name: "Bash", input: { command: "rm -rf /" } } });
      const denied = await pendingOfAlice();
      expect((await app.api(`/v1/approvals/${denied.id}`, { key: operator.apiKey, body: { decision: "deny", message: "Never on this machine." } })).status).toBe(200);
      expect(parsed(await denyCall)).toEqual({ behavior: "deny", message: "Never on this machine." });

      // A name that is no coding tool's is a tool error naming the problem; nothing is created.
      for (const tool_name of ["rm -rf", "mcp__github", "mcp__git hub__x", "9lives"]) {
        const bad = (await client.callTool({ name: "approval_prompt", arguments: { tool_name, input: {} } })) as TToolResult;
        expect(bad.isError, tool_name).toBe(true);
        expect(bad.content[0]?.text).toContain("is not a coding tool's name");
      }
      expect(await pendingOfAliceN(0)).toEqual([]);
    } finally {
      await client.close();
    }
    // A coding tool named like one of the agent's host tools is still the coding action: the
    // approver's edit is that action's (here any JSON), never checked or cut as the host tool's.
    const opsClient = await connect(alice.apiKey, "ops");
    try {
      const call = opsClient.callTool({ name: "approval_prompt", arguments: { tool_name: "exec", input: { command: "ls", shell: "zsh" } } });
      const item = await pendingOfAlice();
      expect(item).toMatchObject({ agent: "ops", action: "coding:exec", toolName: "exec" });
      const edited = { command: "ls -la", shell: "zsh" };
      expect((await app.api(`/v1/approvals/${item.id}`, { key: operator.apiKey, body: { decision: "approve", arguments: edited } })).status).toBe(200);
      expect(parsed(await call)).toEqual({ behavior: "allow", updatedInput: edited });
    } finally {
      await opsClient.close();
    }
    // No agent in the URL: the default agent's, as for POST /v1/approvals without one; Read asks a person there.
    const plainClient = await connect(alice.apiKey);
    try {
      const input = { file_path: "/repo/.env.example" };
      const call = plainClient.callTool({ name: "approval_prompt", arguments: { tool_name: "Read", input } });
      await pendingOfAlice();
      expect((await app.api("/v1/approvals", { key: alice.apiKey, body: { action: "send_email", arguments: { to: "x@example.com" } } })).status).toBe(201);
      const both = await pendingOfAliceN(2);
      const item = both.find((p) => p.action === "coding:Read") as TPendingItem;
      const viaApi = both.find((p) => p.action === "send_email") as TPendingItem;
      expect(item).toMatchObject({ agent: viaApi.agent, arguments: input });
      expect(item.agent).not.toBe("coder");
      expect((await app.api(`/v1/approvals/${item.id}`, { key: operator.apiKey, body: { decision: "approve" } })).status).toBe(200);
      expect(parsed(await call)).toEqual({ behavior: "allow", updatedInput: input });
      expect((await app.api(`/v1/approvals/${viaApi.id}`, { key: operator.apiKey, body: { decision: "deny" } })).status).toBe(200);
    } finally {
      await plainClient.close();
    }
    // An agent the URL names must exist.
    await expect(connect(alice.apiKey, "nobody")).rejects.toThrow(/400|no agent named nobody/);
  });

  it("ask_user waits for a person's answer", async () => {
    const client = await connect(alice.apiKey);
    try {
      const call = client.callTool({ name: "ask_user", arguments: { question: "Which environment?", options: ["staging", "prod"], header: "Env", timeoutSeconds: 30 } });
      let id: string | undefined;
      for (let i = 0; i < 100 && !id; i++) {
        const res = await app.api("/v1/gateway/question.list", { key: operator.apiKey, body: {} });
        const { payload } = (await res.json()) as { payload: { questions: Array<{ id: string; requester: { userId: string } }> } };
        id = payload.questions.find((q) => q.requester.userId === alice.userId)?.id;
        if (!id) await new Promise((r) => setTimeout(r, 100));
      }
      const resolved = await app.api("/v1/gateway/question.resolve", { key: operator.apiKey, body: { id, answers: { answer: ["prod"] } } });
      expect(resolved.status).toBe(200);
      expect(parsed(await call)).toEqual({ status: "answered", answer: "prod" });
    } finally {
      await client.close();
    }
  });

  it("works with the MCP Inspector's command-line mode: tools/list, a call without a key refused, request_approval decided over /v1", async () => {
    const inspector = (args: string[], key?: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
        // Run from its build folder: the Inspector looks for its own package.json relative to the working directory.
        const dir = resolve("node_modules/@modelcontextprotocol/inspector-cli/build");
        const bin = resolve(dir, "cli.js");
        const headers = key ? ["--header", `Authorization: Bearer ${key}`] : [];
        const child = spawn(process.execPath, [bin, "--cli", `${app.url}/v1/mcp`, "--transport", "http", ...headers, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        child.on("error", fail);
        child.on("close", (code) => done({ code, stdout, stderr }));
      });
    /** The Inspector prints the JSON result on stdout (after its own deprecation notice, if any). */
    const json = (out: string) => JSON.parse(out.slice(out.indexOf("{"))) as Record<string, unknown>;

    const listed = await inspector(["--method", "tools/list"], alice.apiKey);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = (json(listed.stdout).tools as Array<{ name: string; inputSchema: { type: string } }>).map((t) => t.name).sort();
    expect(tools).toEqual(["approval_prompt", "ask_user", "request_approval"]);

    const refused = await inspector(["--method", "tools/list"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/401|Unauthorized|Authentication/i);

    const call = inspector(["--method", "tools/call", "--tool-name", "request_approval", "--tool-arg", "action=exec", 'arguments={"command":"make lint"}', "timeoutSeconds=60"], alice.apiKey);
    const pending = await pendingOfAlice();
    expect(pending.arguments).toEqual({ command: "make lint" });
    expect((await app.api(`/v1/approvals/${pending.id}`, { key: operator.apiKey, body: { decision: "approve" } })).status).toBe(200);
    const called = await call;
    expect(called.code, called.stderr).toBe(0);
    const content = json(called.stdout).content as Array<{ type: string; text: string }>;
    expect(JSON.parse(content[0]?.text ?? "null")).toMatchObject({ id: pending.id, status: "approved", arguments: { command: "make lint" } });
  }, 120_000);
});
