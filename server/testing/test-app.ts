import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { DbHandle } from "../../db/client";
import { createTestDb } from "../../db/testing";
import { configuredAgents } from "../agents/catalog";
import { loadAgentsFile } from "../agents/file-config";
import { AgentRegistry } from "../agents/registry";
import type { TAgentConfig } from "../agents/types";
import { createApp, type TApp } from "../app";
import { addUser } from "../auth/users";
import { loadConfig, type TServerConfig } from "../config";
import type { TMediaPolicy } from "../core/media";
import type { TRole } from "../core/vocabulary";
import type { TNotifyConfig } from "../notify/config";
import type { TExecReviewer } from "../reviewer";

export type TTestUser = { userId: string; apiKey: string; email: string; password: string };

export type TTestApp = TApp & {
  /**
   * The server's clock (deadlines it checks itself): `advance(ms)` moves it forward, as if that
   * much time had passed, so a test reaches "expired" without writing rows; `reset()` undoes it.
   */
  clock: { advance: (ms: number) => void; reset: () => void };
  dataDir: string;
  /** The app's database handle (tests of an unreachable database close it). */
  dbHandle: DbHandle;
  /** Everything the server logged (at debug level), for leak checks. */
  logs: () => string;
  /** Creates a user with a console password and an API key. */
  /** A user with a password and an API key; `breakGlass`: may sign in with it while password sign-in is off. */
  user: (role?: TRole, name?: string, options?: { breakGlass?: boolean }) => Promise<TTestUser>;
  /** fetch against the app with an API key. */
  api: (path: string, init?: { method?: string; body?: unknown; key?: string; headers?: Record<string, string>; rawBody?: string }) => Promise<Response>;
};

let userCounter = 0;

/**
 * A server configuration for tests: what loadConfig() reads from the test process's environment
 * (tests configure some variables that way), on a loopback port the OS picks, with no public URL
 * unless given; `overrides` replace parts of it.
 */
export function testConfig(overrides: Partial<TServerConfig> = {}): TServerConfig {
  return { ...loadConfig(), port: 0, host: "127.0.0.1", publicUrl: undefined, ...overrides };
}

/** A whole server (without Next pages) on a fresh database and a temporary data directory. */
export async function startTestApp(
  options: {
    boundaryTimeoutMs?: number;
    expirySweepMs?: number;
    /** COUNTERSIGN_SUGGEST_MIN_REQUESTS. */
    suggestMinRequests?: number;
    reviewer?: TExecReviewer | null;
    agents?: TAgentConfig[];
    notify?: TNotifyConfig | null;
    rateLimit?: TServerConfig["rateLimit"];
    trustedProxies?: TServerConfig["trustedProxies"];
    bodyTimeoutMs?: number;
    maxStreamsPerUser?: number | null;
    credentialRecheckMs?: number;
    livePingMs?: number;
    plugins?: TServerConfig["plugins"];
    metricsToken?: string | null;
    metricsPort?: number | null;
    readyTimeoutMs?: number;
    media?: Partial<TMediaPolicy>;
    /** COUNTERSIGN_PUBLIC_URL (https turns on HSTS and Secure cookies). */
    publicUrl?: string;
    /** The port to listen on (default: one the OS picks), for a test that must name the server's address before it starts. */
    port?: number;
    /** Single sign-on and password sign-in (COUNTERSIGN_OIDC_*, COUNTERSIGN_PASSWORD_LOGIN). */
    signIn?: TServerConfig["signIn"];
    /** A COUNTERSIGN_AGENTS_FILE path: the server serves the file's agents and may reload it (`agents` is ignored). */
    agentsFile?: string;
  } = {},
): Promise<TTestApp> {
  const { agents = [], agentsFile, reviewer, credentialRecheckMs, livePingMs, media, ...settings } = options;
  const db = await createTestDb();
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-test-"));
  let logged = "";
  const sink = {
    write: (line: string) => {
      logged += line;
    },
  };
  let clockOffsetMs = 0;
  const now = () => new Date(Date.now() + clockOffsetMs);
  const base = testConfig();
  const config: TServerConfig = {
    ...base,
    dataDir,
    ...Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)),
    media: { ...base.media, ...media },
    agentsFile: agentsFile ? loadAgentsFile(agentsFile, base.environment) : null,
  };
  const app = await createApp({
    db,
    config,
    now,
    log: pino({ level: "debug" }, sink),
    ...(agentsFile ? {} : { agents: new AgentRegistry([...configuredAgents(base.environment), ...agents]) }),
    ...(reviewer !== undefined ? { reviewer } : {}),
    credentialRecheckMs,
    livePingMs,
  });
  return {
    ...app,
    dataDir,
    dbHandle: db,
    logs: () => logged,
    clock: {
      advance: (ms) => {
        clockOffsetMs += ms;
      },
      reset: () => {
        clockOffsetMs = 0;
      },
    },
    user: async (role = "member", name, userOptions) => {
      const password = `pw-${Math.random().toString(36).slice(2)}-long`;
      const created = await addUser(app.deps.db, app.deps.auth, { name: name ?? `${role} ${++userCounter} ${Date.now()}`, role, password, breakGlass: userOptions?.breakGlass });
      return { ...created, password };
    },
    api: (path, init = {}) =>
      fetch(`${app.url}${path}`, {
        method: init.method ?? (init.body !== undefined || init.rawBody !== undefined ? "POST" : "GET"),
        headers: {
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
          ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
          ...init.headers,
        },
        body: init.rawBody ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined),
      }),
    close: async () => {
      await app.close();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
