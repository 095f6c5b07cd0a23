import type { TAdminWho } from "../core/admin-trail";
import type { Logger } from "pino";
import { loadAgentsFile, type TAgentsFile, type TLoadedAgents } from "./file-config";
import type { AgentRegistry } from "./registry";

/** What a reload answers (the tRPC `admin.reloadAgents` call, the log line of SIGHUP). */
export type TReloadResult =
  | { ok: true; source: string; agents: string[]; defaultAgent: string; loadedAt: string; notes: string[] }
  | { ok: false; source: string; error: string; agents: string[]; loadedAt: string };

/** The effective configuration as admins and auditors read it (no secrets: the file names environment variables, never values). */
export type TEffectiveConfig = {
  source: "file" | "built-in";
  path: string | null;
  loadedAt: string;
  /** The last failed reload since the current configuration was loaded (it kept running). */
  lastError: string | null;
  defaultAgent: string;
  /** The file as validated, defaults filled in (null: no file, the built-in agents). */
  file: TAgentsFile | null;
};

const SECRET_KEYS = new Set(["secret", "signingSecret", "botToken", "headers"]);

/** A URL shown by its origin only: a webhook's path (a Slack incoming webhook's is its credential) and any user or query stay out. */
function urlOrigin(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    const u = new URL(value);
    return u.pathname === "/" && !u.search && !u.username ? u.origin : `${u.origin}/[redacted]`;
  } catch {
    return "[redacted]";
  }
}

/**
 * The file without inline secrets (webhook and Slack secrets, endpoint headers) and with every URL
 * cut to its origin: admins and auditors see what is set and where it goes, not the credential.
 */
export function redactSecrets<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, v) => {
    if (SECRET_KEYS.has(key) && v !== undefined) return "[redacted]";
    if (/url$/i.test(key)) return urlOrigin(v);
    return v;
  }) as T;
}

/** Told once per successful reload (the admin trail records it). */
export type TOnReloaded = (event: { who: TAdminWho; via: "signal" | "trpc"; path: string; agents: string[] }) => void | Promise<void>;

/**
 * The reloadable agents configuration of one process: reads COUNTERSIGN_AGENTS_FILE again and
 * swaps the registry's configured agents in one step. An invalid file keeps the running
 * configuration and reports the error. Runs keep the policy they started with (`responses.agent_policy`).
 */
export class AgentsConfig {
  private loadedAt = new Date();
  private lastError: string | null = null;
  /** The admin trail's "config reloaded" event (wired by the composition root, server/app.ts). */
  onReloaded: TOnReloaded | null = null;

  /** `current`: the file as loaded at boot (server/config/index.ts); `env`: the environment its reloads resolve the variables it names in. */
  constructor(
    private readonly registry: AgentRegistry,
    private readonly log: Logger,
    private current: TLoadedAgents | null,
    private readonly env: Readonly<Record<string, string | undefined>> = {},
  ) {}

  /** Re-reads the file; on error nothing changes and the answer says why. */
  async reload(by: { who: TAdminWho; via: "signal" | "trpc" }): Promise<TReloadResult> {
    const names = () => this.registry.list().map((a) => a.name);
    if (!this.current) {
      const error = "No configuration file is set (COUNTERSIGN_AGENTS_FILE); the built-in agents cannot be reloaded.";
      this.log.warn({ via: by.via }, error);
      return { ok: false, source: "built-in", error, agents: names(), loadedAt: this.loadedAt.toISOString() };
    }
    const path = this.current.path;
    let next: TLoadedAgents;
    try {
      next = loadAgentsFile(path, this.env);
      this.registry.replaceConfigured(next.agents, next.defaultAgent);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.lastError = error;
      this.log.error({ path, via: by.via }, `configuration reload failed; the running configuration stays: ${error}`);
      return { ok: false, source: path, error, agents: names(), loadedAt: this.loadedAt.toISOString() };
    }
    const notes = JSON.stringify(next.file.notify ?? null) === JSON.stringify(this.current.file.notify ?? null) ? [] : ["The notify section changed; notifications use it after a restart."];
    this.current = { ...next, notify: this.current.notify };
    this.loadedAt = new Date();
    this.lastError = null;
    const agents = next.agents.map((a) => a.name);
    this.log.info({ path, via: by.via, agents }, "configuration reloaded");
    await Promise.resolve(this.onReloaded?.({ who: by.who, via: by.via, path, agents })).catch((e: unknown) => this.log.warn({ err: e }, "the reload hook failed"));
    return { ok: true, source: path, agents, defaultAgent: next.defaultAgent, loadedAt: this.loadedAt.toISOString(), notes };
  }

  effective(): TEffectiveConfig {
    return {
      source: this.current ? "file" : "built-in",
      path: this.current?.path ?? null,
      loadedAt: this.loadedAt.toISOString(),
      lastError: this.lastError,
      defaultAgent: this.registry.defaultAgent,
      file: this.current ? redactSecrets(this.current.file) : null,
    };
  }
}
