import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { Logger } from "pino";
import { HOST_RUNTIME, PLUGIN_API_VERSION, type TCountersignPlugin, type TPluginAgent, type TPluginApi, type TPluginHarness } from "../../plugin-sdk";
import type { AgentRegistry } from "../agents/registry";
import type { TAgentConfig } from "../agents/types";
import type { TToolResultMiddlewareRegistry } from "../core/runtime";
import type { HarnessRegistry } from "../harnesses/registry";
import { runModelLoop } from "../harnesses/model-loop";
import { runNativeLoop } from "../harnesses/native-loop";
import type { TTool } from "../tools/types";
import { assertApiCompatible, MANIFEST_FILE, PluginLoadError, readManifest, type TPluginManifest } from "./manifest";
import type { TPluginSource } from "./sources";

export { pluginSourcesFromEnv, type TPluginSource } from "./sources";

/** A plugin as the admin page lists it. */
export type TLoadedPlugin = {
  id: string;
  version: string;
  pluginApi: string;
  location: string;
  harnesses: string[];
  agents: string[];
  /** Runtime ids of each tool-result middleware registration. */
  middleware: string[][];
  status: "loaded";
};

export type TPluginHost = {
  harnesses: HarnessRegistry;
  agents: AgentRegistry;
  middleware: TToolResultMiddlewareRegistry;
  /** The host's tools plugins' agents may name. */
  tools: readonly TTool[];
  log: Logger;
};

const CANONICAL = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** Where a source's folder is (a package's root is where its package.json is). */
function folderOf(source: TPluginSource): string {
  if ("path" in source) {
    if (!existsSync(source.path) || !statSync(source.path).isDirectory()) throw new PluginLoadError(`Plugin at ${source.path}: no such folder.`);
    return source.path;
  }
  try {
    return dirname(createRequire(join(process.cwd(), "package.json")).resolve(`${source.package}/${MANIFEST_FILE}`, { paths: [process.cwd()] }));
  } catch {
    throw new PluginLoadError(`Plugin package ${source.package}: not installed, or it has no ${MANIFEST_FILE}.`);
  }
}

/**
 * Loads the enabled plugins, in order: validates each manifest, refuses an incompatible plugin
 * API range or a runtime list without this host before importing any code, then calls the
 * plugin's `register` with an API bound to its manifest. Any refusal stops the boot with a
 * sentence naming the plugin and the reason; nothing a refused plugin registered stays.
 */
export async function loadPlugins(sources: readonly TPluginSource[], host: TPluginHost): Promise<TLoadedPlugin[]> {
  const loaded: TLoadedPlugin[] = [];
  for (const source of sources) {
    if (!source.enabled) {
      host.log.info({ plugin: "path" in source ? source.path : source.package }, "plugin disabled in the configuration; not loaded");
      continue;
    }
    const dir = folderOf(source);
    const manifest = readManifest(dir);
    assertApiCompatible(manifest, PLUGIN_API_VERSION);
    if (!manifest.runtimes.includes(HOST_RUNTIME)) {
      throw new PluginLoadError(`Plugin ${manifest.id} targets runtimes ${manifest.runtimes.join(", ")}; this host is ${HOST_RUNTIME}. It was not loaded.`);
    }
    if (loaded.some((p) => p.id === manifest.id)) throw new PluginLoadError(`Plugin ${manifest.id} is configured twice.`);
    const mod = (await import(pathToFileURL(join(dir, manifest.main)).href).catch((error: unknown) => {
      throw new PluginLoadError(`Plugin ${manifest.id}: cannot load ${manifest.main}: ${(error as Error).message}`);
    })) as { default?: TCountersignPlugin };
    const plugin = mod.default;
    if (!plugin || typeof plugin.register !== "function") throw new PluginLoadError(`Plugin ${manifest.id}: ${manifest.main} has no default export with a register(api) function.`);
    const record: TLoadedPlugin = { id: manifest.id, version: manifest.version, pluginApi: manifest.pluginApi, location: dir, harnesses: [], agents: [], middleware: [], status: "loaded" };
    const undo: Array<() => void> = [];
    try {
      await plugin.register(pluginApi(manifest, host, record, undo));
    } catch (error) {
      for (const u of undo.reverse()) u();
      throw error instanceof PluginLoadError ? error : new PluginLoadError(`Plugin ${manifest.id}: register failed: ${(error as Error).message}`);
    }
    host.log.info({ plugin: manifest.id, version: manifest.version, harnesses: record.harnesses, agents: record.agents }, "plugin loaded");
    loaded.push(record);
  }
  return loaded;
}

function pluginApi(manifest: TPluginManifest, host: TPluginHost, record: TLoadedPlugin, undo: Array<() => void>): TPluginApi {
  const refuse = (what: string): never => {
    throw new PluginLoadError(`Plugin ${manifest.id}: ${what}`);
  };
  return {
    apiVersion: PLUGIN_API_VERSION,
    manifest: Object.freeze(structuredClone(manifest)),
    registerHarness: (harness: TPluginHarness) => {
      if (!harness || typeof harness.id !== "string" || !CANONICAL.test(harness.id)) refuse(`registerHarness: id ${JSON.stringify(harness?.id)} is not a canonical id.`);
      if ((typeof harness.createDriver === "function") === (typeof harness.run === "function")) refuse(`registerHarness(${harness.id}): give exactly one of createDriver (the host runs the tools) and run (a native loop) as a function.`);
      if (host.harnesses.find(harness.id)) refuse(`registerHarness: a harness with id ${harness.id} already exists.`);
      if (harness.sideQuestion !== undefined && typeof harness.sideQuestion !== "function") refuse(`registerHarness(${harness.id}): sideQuestion must be a function.`);
      const unregister = host.harnesses.register({
        id: harness.id,
        source: manifest.id,
        ...(harness.supportsCrossProfileSteering === false ? { supportsCrossProfileSteering: false } : {}),
        native: typeof harness.run === "function",
        ...(harness.sideQuestion ? { sideQuestion: harness.sideQuestion } : {}),
        parseInput: (input) => {
          const verdict = harness.parseInput ? harness.parseInput(input) : { ok: true as const };
          return verdict.ok ? { ok: true, value: {} } : { ok: false, message: verdict.message };
        },
        run: (attempt) => {
          const { run, createDriver } = harness;
          if (run) return runNativeLoop(attempt, run);
          return runModelLoop(attempt, (createDriver as NonNullable<typeof createDriver>)({ input: attempt.input, agent: { name: attempt.agent.name, model: attempt.agent.model }, hostCapabilities: attempt.harnessCapabilities, signal: attempt.signal }));
        },
      });
      undo.push(unregister);
      record.harnesses.push(harness.id);
    },
    registerAgent: (agent: TPluginAgent) => {
      if (!agent || typeof agent.name !== "string" || !CANONICAL.test(agent.name)) refuse(`registerAgent: name ${JSON.stringify(agent?.name)} is not a canonical name.`);
      if (!host.harnesses.find(agent.harness)) refuse(`registerAgent(${agent.name}): harness ${agent.harness} is not registered (register it first).`);
      const tools = agent.tools.map((name) => host.tools.find((t) => t.name === name) ?? refuse(`registerAgent(${agent.name}): the host has no tool named ${name}.`));
      const nativeTools = agent.nativeTools ?? [];
      for (const name of nativeTools) {
        if (typeof name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(name)) refuse(`registerAgent(${agent.name}): native tool name ${JSON.stringify(name)} must be 1–64 letters, digits, '_', '.' or '-'.`);
        if (agent.tools.includes(name)) refuse(`registerAgent(${agent.name}): ${name} is both a host tool and a native tool.`);
      }
      const nodeCommands = agent.requiredNodeCommands;
      if (nodeCommands !== undefined) {
        // As the agents file takes it: non-empty command names (the device's allowlist says what each runs).
        if (!Array.isArray(nodeCommands) || nodeCommands.some((c) => typeof c !== "string" || c === "")) {
          refuse(`registerAgent(${agent.name}): requiredNodeCommands must be a list of non-empty node command names.`);
        }
        if (!agent.tools.includes("node_invoke")) refuse(`registerAgent(${agent.name}): requiredNodeCommands needs the node_invoke tool among its tools.`);
      }
      if (nativeTools.length > 0 && !host.harnesses.find(agent.harness)?.native) refuse(`registerAgent(${agent.name}): nativeTools need a native-loop harness; ${agent.harness} is not one.`);
      for (const [tool, policy] of Object.entries(agent.approval ?? {})) {
        if (!agent.tools.includes(tool) && !nativeTools.includes(tool)) refuse(`registerAgent(${agent.name}): approval names ${tool}, which is not among its tools.`);
        if (!["always", "review", "never"].includes(policy)) refuse(`registerAgent(${agent.name}): approval.${tool} must be always, review or never.`);
      }
      const config: TAgentConfig = {
        name: agent.name,
        harness: agent.harness,
        model: agent.model ?? agent.harness,
        description: agent.description,
        tools,
        approval: agent.approval ?? {},
        approvalTtlMs: agent.approvalTtlMs ?? 15 * 60_000,
        clientToolTtlMs: agent.clientToolTtlMs ?? 5 * 60_000,
        maxTurns: agent.maxTurns ?? 32,
        ...(nativeTools.length > 0 ? { nativeTools: [...nativeTools] } : {}),
        // A copy: the plugin changing its array after registering changes nothing.
        ...(nodeCommands !== undefined ? { requiredNodeCommands: [...nodeCommands] } : {}),
        ...(agent.endpoint ? { endpoint: { ...agent.endpoint } } : {}),
        ...(agent.system ? { system: agent.system } : {}),
      };
      try {
        undo.push(host.agents.register(config));
      } catch (error) {
        refuse(`registerAgent: ${(error as Error).message}`);
      }
      record.agents.push(agent.name);
    },
    registerAgentToolResultMiddleware: (handler, options) => {
      try {
        // The registry itself checks the pairs against the manifest's declaration (an absent one is refused there).
        const contracts = { agentToolResultMiddleware: manifest.contracts?.agentToolResultMiddleware as string[] };
        undo.push(host.middleware.register({ id: manifest.id, manifest: { contracts } }, handler, options));
      } catch (error) {
        refuse((error as Error).message);
      }
      const runtimes = options?.runtimes ?? (manifest.contracts?.agentToolResultMiddleware ?? []);
      record.middleware.push([...runtimes]);
    },
    log: {
      info: (message, data) => host.log.info({ plugin: manifest.id, ...data }, message),
      warn: (message, data) => host.log.warn({ plugin: manifest.id, ...data }, message),
    },
  };
}
