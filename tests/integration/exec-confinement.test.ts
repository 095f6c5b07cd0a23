import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabaseUrl, testDbKind } from "../../db/testing";
import type { TAgentConfig } from "../../server/agents/types";
import { BUILTIN_AGENTS } from "../../server/agents/catalog";
import { detectExecSandbox } from "../../server/tools/exec-sandbox";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { execTurn, invoke, ok200, rows, script, tableCounts, workspaceOf } from "./helpers";

/** bubblewrap works on this machine (test-all.sh installs it); the network checks need it. */
const BWRAP = detectExecSandbox("auto", undefined).mode === "bwrap";
const CANARY = `canary-${Math.random().toString(36).slice(2)}`;
const NAMED = `named-${Math.random().toString(36).slice(2)}`;
const scripted = BUILTIN_AGENTS.find((a) => a.name === "scripted") as TAgentConfig;
/** An agent whose commands may use the network and receive one named variable. */
const withAllowances: TAgentConfig = { ...scripted, name: "scripted-allowances", exec: { network: true, env: ["COUNTERSIGN_TEST_NAMED"] } };

type TExecResult = { exitCode: number | null; stdout: string; stderr: string; error?: string };
const toolResult = (env: { output: Array<{ type: string; output?: unknown }> }, i = 0) => env.output.filter((o) => o.type === "tool_result")[i]?.output as TExecResult;

describe(`approved exec is confined (${testDbKind()})`, () => {
  let app: TTestApp;
  let operator: TTestUser;

  beforeAll(async () => {
    // What a command must never see: the server's secrets and settings.
    process.env.COUNTERSIGN_TEST_CANARY = CANARY;
    process.env.COUNTERSIGN_TEST_NAMED = NAMED;
    app = await startTestApp({ agents: [withAllowances] });
    operator = await app.user("operator");
    writeFileSync(join(app.dataDir, "auth-secret-probe"), CANARY, { mode: 0o600 });
  });
  afterAll(async () => {
    await app.close();
    delete process.env.COUNTERSIGN_TEST_CANARY;
    delete process.env.COUNTERSIGN_TEST_NAMED;
  });

  /** Runs one exec through the API (approved by the operator who started it) and returns its result. */
  async function approvedExec(args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: args }] }, { text: "done" }]), extra);
    if (env.status !== "requires_action") return { env, result: toolResult(env), approval: null };
    const action = env.requiredAction as { id: string; cwd: string; message: string };
    const done = await ok200(await app.api(`/v1/approvals/${action.id}`, { key: operator.apiKey, body: { decision: "approve" } }));
    return { env: done, result: toolResult(done), approval: action };
  }

  it("a working directory outside the workspace is refused before any approval is asked", async () => {
    const before = (await tableCounts(app)).approvals;
    for (const cwd of ["/", "../../..", "..", "/etc", app.dataDir, `${app.dataDir}/workspaces`]) {
      const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "echo pwned > pwned.txt", cwd } }] }, { text: "done" }]));
      expect(env.status, cwd).toBe("completed");
      const result = toolResult(env);
      expect(result.error).toMatch(/is outside the session workspace; commands run only inside it\. The command was not run\./);
      // The sentence names the path as the agent wrote it, never another server path.
      expect(result.error).toContain(JSON.stringify(cwd));
      expect(existsSync(join(workspaceOf(app, env.sessionId), "pwned.txt"))).toBe(false);
    }
    expect((await tableCounts(app)).approvals).toBe(before);
  });

  it("a symlink out of the workspace is followed and refused, and a missing directory is refused", async () => {
    const link = await approvedExec({ command: "ln -s / escape && mkdir -p sub/inner && echo ok" });
    expect(link.result.exitCode, link.result.stderr).toBe(0);
    const sessionId = link.env.sessionId;
    const viaLink = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "ls", cwd: "escape/etc" } }] }, { text: "done" }]), { sessionId });
    expect(viaLink.status).toBe("completed");
    expect(toolResult(viaLink).error).toMatch(/"escape\/etc" is outside the session workspace/);
    const missing = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "ls", cwd: "nope" } }] }, { text: "done" }]), { sessionId });
    expect(toolResult(missing).error).toMatch(/"nope" does not exist in the session workspace/);
  });

  it("a subdirectory of the workspace works, and clients see it relative to the workspace", async () => {
    const first = await approvedExec({ command: "mkdir -p build/out" });
    const env = await invoke(app, operator.apiKey, script([{ toolCalls: [{ name: "exec", arguments: { command: "pwd > where.txt", cwd: "build/out" } }] }, { text: "done" }]), { sessionId: first.env.sessionId });
    expect(env.status).toBe("requires_action");
    const action = env.requiredAction as { id: string; cwd: string; message: string };
    expect(action.cwd).toBe("build/out");
    expect(action.message).toBe("Run `pwd > where.txt` in ./build/out?");
    expect(JSON.stringify(env)).not.toContain(app.dataDir);
    const done = await ok200(await app.api(`/v1/approvals/${action.id}`, { key: operator.apiKey, body: { decision: "approve" } }));
    expect(done.status).toBe("completed");
    const workspace = workspaceOf(app, env.sessionId);
    expect(readFileSync(join(workspace, "build/out/where.txt"), "utf8").trim()).toBe(join(workspace, "build/out"));
  });

  it("the command sees a minimal environment: none of the server's variables, HOME is the workspace", async () => {
    const { result, env } = await approvedExec({ command: "env" });
    expect(result.exitCode).toBe(0);
    const names = result.stdout.split("\n").filter(Boolean).map((l) => l.split("=")[0] as string);
    // The allowlist, plus what bash itself sets (PWD, SHLVL, _).
    const allowed = ["COUNTERSIGN_PROCESS_MARKER", "HOME", "LANG", "PATH", "TERM", "PWD", "SHLVL", "_"];
    expect(names.filter((n) => !allowed.includes(n))).toEqual([]);
    expect(names).toEqual(expect.arrayContaining(["PATH", "HOME", "LANG", "TERM"]));
    for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "BETTER_AUTH_SECRET", "COUNTERSIGN_SECRET_KEY", "COUNTERSIGN_TEST_CANARY", "COUNTERSIGN_TEST_NAMED", "NODE_OPTIONS"]) {
      expect(names).not.toContain(name);
    }
    expect(result.stdout).not.toContain(CANARY);
    expect(result.stdout).toContain(`HOME=${workspaceOf(app, env.sessionId)}`);
  });

  it("an agent's named variables (and only those) reach its commands", async () => {
    const { result } = await approvedExec({ command: "echo named=$COUNTERSIGN_TEST_NAMED canary=$COUNTERSIGN_TEST_CANARY" }, { agent: withAllowances.name });
    expect(result.stdout.trim()).toBe(`named=${NAMED} canary=`);
  });

  it("the command cannot read the data directory: secrets, the database files, other sessions", async () => {
    const other = await approvedExec({ command: "echo theirs > theirs.txt" });
    const otherWorkspace = workspaceOf(app, other.env.sessionId);
    const { result, env } = await approvedExec({
      command: `cat ${app.dataDir}/auth-secret-probe ${app.dataDir}/secret-key ${app.dataDir}/auth-secret; ls ${app.dataDir}; cat ${otherWorkspace}/theirs.txt ../${other.env.sessionId}/theirs.txt; echo end`,
    });
    // Inside bubblewrap the workspace's parents exist as empty directories; nothing else of the data directory does.
    expect(result.stdout.trim().split("\n").filter((l) => l !== "workspaces")).toEqual(["end"]);
    for (const name of ["auth-secret", "secret-key", "pglite", "control.sock"]) expect(result.stdout).not.toContain(name);
    expect(result.stdout + result.stderr).not.toContain(CANARY);
    expect(result.stdout).not.toContain("theirs");
    // Error messages the agent reads never carry a secret either.
    expect(JSON.stringify(env)).not.toContain(CANARY);
    expect(statSync(app.dataDir).mode & 0o777).toBe(0o700);
  });

  it("boot says which sandbox is active", () => {
    expect(app.logs()).toMatch(/approved commands run in sandbox mode \\?"(bwrap|user|none)\\?"/);
    expect(["bwrap", "user", "none"]).toContain(app.deps.sandbox.mode);
  });

  it.runIf(BWRAP)("network is off unless the agent allows it (bubblewrap)", async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${new URL(app.url).port} && printf 'GET /v1/healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -1 <&3 || echo unreachable`;
    expect((await approvedExec({ command: probe })).result.stdout).toContain("unreachable");
    expect((await approvedExec({ command: probe }, { agent: withAllowances.name })).result.stdout).toMatch(/^HTTP\/1\.[01] 200/);
  });

  it("nothing recorded the server's absolute paths for clients", async () => {
    const leaked = await rows<{ n: number | string }>(app, `select count(*) as n from approvals where cwd like '/%'`);
    expect(Number(leaked[0]?.n)).toBe(0);
  });
});

describe(`the CLI control channel (${testDbKind()})`, () => {
  let dataDir: string;
  let server: TServerProcess;
  let database: Awaited<ReturnType<typeof createTestDatabaseUrl>>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "countersign-control-"));
    database = await createTestDatabaseUrl();
    server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url });
  });
  afterAll(async () => {
    await server.kill();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is no HTTP route, and an approved command cannot reach the socket or make an admin", async () => {
    const key = await demoApiKey(dataDir);
    const old = await fetch(`${server.url}/internal/cli`, { method: "POST", headers: { "content-type": "application/json", "x-countersign-control": "x" }, body: JSON.stringify({ argv: ["user", "add", "Eve", "--role", "admin"] }) });
    expect(old.status).toBe(404);
    const socket = join(dataDir, "control.sock");
    const pglite = testDbKind() === "pglite";
    expect(existsSync(socket)).toBe(pglite);
    if (pglite) expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dataDir, "server.json"))).toBe(false);

    const attack = `ls -la ${dataDir}; test -e ${socket} && echo socket-visible; curl -s --max-time 2 --unix-socket ${socket} -X POST -H 'content-type: application/json' -d '{"argv":["user","add","Eve","--role","admin","--json"]}' http://x/cli; echo end`;
    const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const started = await (await post("/v1/responses", { input: script([execTurn(attack), { text: "done" }]) })).json();
    const done = await (await post(`/v1/approvals/${started.requiredAction.id}`, { decision: "approve" })).json();
    expect(done.status).toBe("completed");
    const result = (done.output as Array<{ type: string; output?: TExecResult }>).find((o) => o.type === "tool_result")?.output as TExecResult;
    expect(result.stdout).not.toContain("socket-visible");
    expect(result.stdout).not.toContain("userId");
    expect(result.stdout.trim().endsWith("end")).toBe(true);

    // The CLI itself still works while the server runs (through the socket on PGlite), and Eve was never made.
    const cli = (...argv: string[]) =>
      JSON.parse(
        execFileSync(process.execPath, ["--import", "tsx", "server/cli/main.ts", ...argv, "--json"], {
          env: { ...process.env, COUNTERSIGN_DATA_DIR: dataDir, DATABASE_URL: database?.url ?? "" },
          encoding: "utf8",
        }),
      ) as Record<string, unknown>;
    expect(cli("user", "add", "Grace", "--role", "member").userId).toMatch(/^user_[0-9a-f]{32}$/);
    // With --json, a refusal is `{"error":{code,message}}` on stdout and a non-zero exit.
    let refusal = "";
    try {
      cli("key", "create", "Eve");
    } catch (error) {
      refusal = String((error as { stdout?: string }).stdout ?? "");
    }
    expect(JSON.parse(refusal).error.message).toMatch(/No single user matches Eve\./);
  });
});
