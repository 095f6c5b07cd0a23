import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";

/**
 * Issue 19 point 4: `/v1/mcp`, Countersign as an MCP server, through the official SDK's client:
 * request_approval, ask_user and approval_prompt, decided by another user over /v1.
 */
let app: TTestApp;
let alice: TTestUser;
let operator: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, operator] = await Promise.all([app.user("member", "Alice"), app.user("operator", "Olga Operator")]);
  // Migrations on a fresh database can take long on a busy machine.
}, 180_000);
afterAll(async () => {
  await app?.close();
});

async function connect(key?: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/v1/mcp`), { requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} } });
  await client.connect(transport);
  return client;
}

type TToolResult = { content: Array<{ type: string; text: string }>; isError?: boolean };
const parsed = (r: unknown) => JSON.parse((r as TToolResult).content[0]?.text ?? "null") as Record<string, unknown>;

/** The newest pending approval of Alice's, as the operator lists it (waits for it to appear). */
async function pendingOfAlice(): Promise<{ id: string; arguments: Record<string, unknown> }> {
  for (let i = 0; i < 100; i++) {
    const res = await app.api("/v1/approvals?status=pending", { key: operator.apiKey });
    const { approvals } = (await res.json()) as { approvals: Array<{ id: string; user: string; arguments: Record<string, unknown> }> };
    const mine = approvals.find((a) => a.user === "Alice");
    if (mine) return mine;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no pending approval of Alice's appeared");
}

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
      // An unknown action is a tool error naming it, and creates nothing.
      const unknown = (await client.callTool({ name: "request_approval", arguments: { action: "launch_missiles", arguments: {} } })) as TToolResult;
      expect(unknown.isError).toBe(true);
      expect(unknown.content[0]?.text).toContain("launch_missiles");
    } finally {
      await client.close();
    }
  });

  it("approval_prompt: allow with updatedInput, deny with the reply, allow at once by policy, deny an unknown tool", async () => {
    const client = await connect(alice.apiKey);
    try {
      const allowCall = client.callTool({ name: "approval_prompt", arguments: { tool_name: "Bash", input: { command: "npm test", description: "Run the tests" } } });
      const first = await pendingOfAlice();
      expect(first.arguments).toEqual({ command: "npm test" });
      expect((await app.api(`/v1/approvals/${first.id}`, { key: operator.apiKey, body: { decision: "approve" } })).status).toBe(200);
      expect(parsed(await allowCall)).toEqual({ behavior: "allow", updatedInput: { command: "npm test", description: "Run the tests" } });

      const denyCall = client.callTool({ name: "approval_prompt", arguments: { tool_name: "Bash", input: { command: "rm -rf /" } } });
      const second = await pendingOfAlice();
      expect((await app.api(`/v1/approvals/${second.id}`, { key: operator.apiKey, body: { decision: "deny", message: "Never on this machine." } })).status).toBe(200);
      expect(parsed(await denyCall)).toEqual({ behavior: "deny", message: "Never on this machine." });

      expect(parsed(await client.callTool({ name: "approval_prompt", arguments: { tool_name: "echo", input: { text: "hi" } } }))).toEqual({ behavior: "allow", updatedInput: { text: "hi" } });
      const unknown = parsed(await client.callTool({ name: "approval_prompt", arguments: { tool_name: "WebFetch", input: { url: "https://example.test" } } }));
      expect(unknown).toMatchObject({ behavior: "deny", message: expect.stringContaining("WebFetch") });
    } finally {
      await client.close();
    }
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
