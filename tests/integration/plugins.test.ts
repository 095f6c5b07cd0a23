import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { HOST_TOOL_CATALOG } from "../../server/agents/catalog";
import { AgentRegistry } from "../../server/agents/registry";
import { createToolResultMiddlewareRegistry } from "../../server/core/runtime";
import { HarnessRegistry } from "../../server/harnesses/registry";
import { loadPlugins, pluginSourcesFromEnv, type TPluginSource } from "../../server/plugins/loader";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, expectError, invoke, ok200 } from "./helpers";

const EXAMPLE = resolve("examples/plugins/echo-native");
const scratch = mkdtempSync(join(tmpdir(), "countersign-plugins-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of the example plugin with its manifest changed, in a folder of its own. */
function variant(name: string, change: (manifest: Record<string, unknown>) => void, index?: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(EXAMPLE, "countersign.plugin.json"), "utf8")) as Record<string, unknown>;
  change(manifest);
  writeFileSync(join(dir, "countersign.plugin.json"), JSON.stringify(manifest));
  writeFileSync(join(dir, "index.ts"), index ?? readFileSync(join(EXAMPLE, "index.ts"), "utf8").replaceAll("../../../plugin-sdk", resolve("plugin-sdk")));
  return dir;
}

/** Loads plugins into fresh registries: what the boot does before anything listens. */
const boot = (sources: TPluginSource[]) =>
  loadPlugins(sources, { harnesses: new HarnessRegistry(), agents: new AgentRegistry([]), middleware: createToolResultMiddlewareRegistry(), tools: HOST_TOOL_CATALOG, log: pino({ level: "silent" }) });

describe(`a harness plugin loaded through the configuration (${testDbKind()})`, () => {
  let app: TTestApp;
  let operator: TTestUser;
  let approver: TTestUser;
  beforeAll(async () => {
    app = await startTestApp({ plugins: [{ path: EXAMPLE, enabled: true }] });
    operator = await app.user("operator");
    approver = await app.user("operator");
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it("runs the plugin's agent through /v1: its exec is an approval, the host runs it once, middleware sees the result", async () => {
    const waiting = await invoke(app, operator.apiKey, "run: echo from-plugin", { agent: "echo-native" });
    expect(waiting.status).toBe("requires_action");
    expect(waiting.requiredAction?.type).toBe("human_approval");
    const done = await ok200(await decide(app, approver.apiKey, waiting.requiredAction?.id as string, "approve"));
    expect(done.status).toBe("completed");
    expect(done.outputText).toContain("Running it.");
    expect(done.outputText).toContain("from-plugin");
    // The plugin's tool-result middleware saw the exec result before the model did.
    expect(done.outputText).toContain('"seenBy":"echo-native"');
    const trajectory = await (await app.api(`/api/export/trajectory?responseId=${done.id}`, { key: operator.apiKey })).text();
    const types = trajectory
      .split("\n")
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.filter((t) => t === "harness.echo_native.turn")).toHaveLength(2);
    expect(types).toContain("harness.tool_result.middleware");
  });

  it("echoes text, and the harness's own input check is a 400 naming it", async () => {
    const echoed = await invoke(app, operator.apiKey, "hello", { agent: "echo-native" });
    expect(echoed.status).toBe("completed");
    expect(echoed.outputText).toBe("echo: hello");
    const refused = await app.api("/v1/responses", { key: operator.apiKey, body: { agent: "echo-native", input: { script: [] } } });
    expect((await expectError(refused, 400, "invalid_request")).detail).toBe("The echo-native harness takes a text input.");
  });

  it("lists the loaded plugin, its harness, agent and middleware for admins (tRPC admin.plugins)", async () => {
    const admin = await app.user("admin");
    const res = await app.api("/api/trpc/admin.plugins", { key: admin.apiKey });
    expect(res.status).toBe(200);
    const plugins = ((await res.json()) as { result: { data: Array<Record<string, unknown>> } }).result.data;
    expect(plugins).toEqual([expect.objectContaining({ id: "echo-native", version: "1.0.0", harnesses: ["echo-native"], agents: ["echo-native"], middleware: [["countersign"]], status: "loaded" })]);
    const member = await app.user("member");
    expect((await app.api("/api/trpc/admin.plugins", { key: member.apiKey })).status).toBe(403);
  });
});

describe("plugins refused at boot, with the reason", () => {
  it("only enabled plugins load: a disabled one registers nothing", async () => {
    expect(await boot([{ path: EXAMPLE, enabled: false }])).toEqual([]);
  });

  it("a bad manifest names the field", async () => {
    await expect(boot([{ path: variant("no-api", (m) => delete m.pluginApi), enabled: true }])).rejects.toThrow(/manifest field "pluginApi"/);
    await expect(boot([{ path: variant("bad-version", (m) => (m.version = "one")), enabled: true }])).rejects.toThrow(/manifest field "version" must be a semantic version/);
    await expect(boot([{ path: variant("extra", (m) => (m.entrypoint = "index.js")), enabled: true }])).rejects.toThrow(/manifest field "entrypoint" is not a manifest field \(unknown fields are refused\)\./);
    await expect(boot([{ path: variant("extra-nested", (m) => (m.contracts = { agentToolResultMiddleware: [], extra: true })), enabled: true }])).rejects.toThrow(/manifest field "contracts\.extra" is not a manifest field/);
    await expect(boot([{ path: join(scratch, "missing"), enabled: true }])).rejects.toThrow(/no such folder/);
  });

  it("an incompatible plugin API range is refused before its code loads, naming both versions", async () => {
    const dir = variant("future", (m) => (m.pluginApi = "^2.0.0"), "throw new Error('code was loaded');\nexport default {};\n");
    await expect(boot([{ path: dir, enabled: true }])).rejects.toThrow("needs plugin API ^2.0.0; this host provides plugin API 1.2.0");
  });

  it("a plugin that targets other runtimes only is refused", async () => {
    await expect(boot([{ path: variant("codex-only", (m) => (m.runtimes = ["codex"])), enabled: true }])).rejects.toThrow(/targets runtimes codex; this host is countersign/);
  });

  it("middleware for an empty runtime list or an undeclared runtime is refused; a refused plugin leaves nothing registered", async () => {
    const registering = (runtimes: string) =>
      `export default { register(api) { api.registerHarness({ id: "partial", createDriver: () => ({ nextTurn: async () => null }) }); api.registerAgentToolResultMiddleware(() => undefined, { runtimes: ${runtimes} }); } };\n`;
    const harnesses = new HarnessRegistry();
    const load = (dir: string) => loadPlugins([{ path: dir, enabled: true }], { harnesses, agents: new AgentRegistry([]), middleware: createToolResultMiddlewareRegistry(), tools: HOST_TOOL_CATALOG, log: pino({ level: "silent" }) });
    await expect(load(variant("empty-runtimes", () => {}, registering("[]")))).rejects.toThrow(/empty runtime list/);
    expect(harnesses.find("partial")).toBeUndefined();
    await expect(load(variant("undeclared", () => {}, registering('["codex"]')))).rejects.toThrow(/does not declare/);
    await expect(load(variant("undeclared-none", (m) => delete m.contracts, registering("undefined")))).rejects.toThrow(/does not declare contracts.agentToolResultMiddleware/);
  });

  it("requiredNodeCommands needs node_invoke among the agent's tools, and non-empty command names", async () => {
    const agentWith = (name: string, fields: string) =>
      `export default { register(api) { api.registerAgent({ name: "${name}", harness: "scripted", description: "d", ${fields} }); } };\n`;
    await expect(boot([{ path: variant("nodes-no-tool", () => {}, agentWith("nodes-no-tool", 'tools: ["exec"], requiredNodeCommands: ["uptime"]')), enabled: true }])).rejects.toThrow(
      "registerAgent(nodes-no-tool): requiredNodeCommands needs the node_invoke tool among its tools.",
    );
    await expect(boot([{ path: variant("nodes-empty-name", () => {}, agentWith("nodes-empty-name", 'tools: ["node_invoke"], requiredNodeCommands: [""]')), enabled: true }])).rejects.toThrow(
      "requiredNodeCommands must be a list of non-empty node command names.",
    );
  });

  it("the configuration file names plugins and whether each is enabled; a bad file names the field", () => {
    const file = join(scratch, "plugins.json");
    writeFileSync(file, JSON.stringify({ plugins: [{ path: "./one", enabled: true }, { package: "some-plugin", enabled: false }] }));
    expect(pluginSourcesFromEnv({ COUNTERSIGN_PLUGINS_FILE: file, COUNTERSIGN_PLUGINS: "/opt/two" })).toEqual([
      { path: join(scratch, "one"), enabled: true },
      { package: "some-plugin", enabled: false },
      { path: "/opt/two", enabled: true },
    ]);
    writeFileSync(file, JSON.stringify({ plugins: [{ path: "./one" }] }));
    expect(() => pluginSourcesFromEnv({ COUNTERSIGN_PLUGINS_FILE: file })).toThrow(/field "plugins.0/);
  });

  it("a refused plugin stops the server's boot", async () => {
    await expect(startTestApp({ plugins: [{ path: variant("boot-refused", (m) => (m.pluginApi = ">=9")), enabled: true }] })).rejects.toThrow(/needs plugin API >=9/);
  }, 120_000);
});
