import { BlockList, isIP } from "node:net";
import { resolve } from "node:path";
import { z } from "zod";
import { loadAgentsFile, type TLoadedAgents } from "../agents/file-config";
import { signInConfigFrom, type TSignInConfig } from "../auth/sso-config";
import { mediaPolicyFromEnv, type TMediaPolicy } from "../core/media";
import { pluginSourcesFromEnv, type TPluginSource } from "../plugins/loader";
import { modelAgentFromEnv } from "../agents/model-agent";
import { parseSecretKey } from "../host/secret-store";
import { mcpServersFromEnv } from "../mcp/config";
import { loadNotifyConfig, type TNotifyConfig } from "../notify/config";
import { reviewerConfigFromEnv, type TReviewerConfig } from "../reviewer";
import { EXEC_SANDBOX_MODES, parseExecUser, parseSandboxReuse, type TSandboxReuse } from "../tools/exec-sandbox";

/*
 * The parsers of the variables whose syntax is more than a number or a URL. They live here, with
 * the variables they read; the modules that use the values get them parsed (server/app.ts).
 */

/** One token bucket: its refill rate and its size. */
export type TBucketRate = { perSecond: number; burst: number };
/**
 * `key`: per API key / console session; `ip`: anonymous requests and credentials not yet seen to
 * work; `signIn`: password sign-ins per client address (on top of `ip`).
 */
export type TRateLimitConfig = { key: TBucketRate; ip: TBucketRate; signIn: TBucketRate };

/** Generous enough that no test suite or single console comes near it; per process (per replica). */
export const DEFAULT_RATE_LIMIT = "1000:2000,ip=100:400";

/**
 * Sign-ins per client address: a burst of 10, then one every 5 s. A person mistyping never meets
 * it; a password sprayer trying many accounts from one address is slowed to 12 a minute (each
 * account also has its own backoff, server/auth/sign-in-backoff.ts).
 */
export const DEFAULT_SIGN_IN_RATE = "0.2:10";

function parseRate(text: string, what: string): TBucketRate {
  const match = text.trim().match(/^(\d+(?:\.\d+)?)(?:\s*[:/]\s*(\d+))?$/);
  if (!match) throw new Error(`Invalid COUNTERSIGN_RATE_LIMIT ${what} "${text}": use <requests per second>[:<burst>], e.g. 50:200, or "off".`);
  const perSecond = Number(match[1]);
  const burst = match[2] === undefined ? Math.max(1, Math.ceil(perSecond * 2)) : Number(match[2]);
  if (!(perSecond > 0) || !(burst >= 1)) throw new Error(`Invalid COUNTERSIGN_RATE_LIMIT ${what} "${text}": rate and burst must be positive.`);
  return { perSecond, burst };
}

/**
 * `COUNTERSIGN_RATE_LIMIT`: `off`, or `<rps>[:<burst>][,ip=<rps>[:<burst>]][,signin=<rps>[:<burst>]]`
 * (default `1000:2000,ip=100:400`, sign-ins `0.2:10`). Without `ip=` anonymous callers get the
 * smaller of the key rate and 100:400.
 */
export function parseRateLimit(value: string | undefined): TRateLimitConfig | null {
  const text = (value === undefined || value.trim() === "" ? DEFAULT_RATE_LIMIT : value).trim().toLowerCase();
  if (text === "off" || text === "0" || text === "false" || text === "none") return null;
  const [keyPart = "", ...rest] = text.split(",").map((r) => r.trim());
  const key = parseRate(keyPart, "rate");
  const ipPart = rest.find((r) => r.startsWith("ip="));
  const signInPart = rest.find((r) => r.startsWith("signin="));
  const unknown = rest.filter((r) => !r.startsWith("ip=") && !r.startsWith("signin="));
  if (unknown.length > 0) throw new Error(`Invalid COUNTERSIGN_RATE_LIMIT: unknown part "${unknown[0]}".`);
  const ip = ipPart ? parseRate(ipPart.slice(3), "ip rate") : { perSecond: Math.min(key.perSecond, 100), burst: Math.min(key.burst, 400) };
  const signIn = parseRate(signInPart ? signInPart.slice(7) : DEFAULT_SIGN_IN_RATE, "signin rate");
  return { key, ip, signIn };
}


/** The proxies whose `X-Forwarded-For` is believed (empty: none, the peer is the client). */
export type TTrustedProxies = { readonly list: BlockList; readonly size: number };

/**
 * Parses `COUNTERSIGN_TRUSTED_PROXIES`: comma-separated IPs and CIDR ranges (IPv4 or IPv6), e.g.
 * `10.0.0.0/8, 127.0.0.1, fd00::/8`. Throws a sentence naming the bad entry, so a typo stops the boot
 * instead of silently trusting nobody (or everybody).
 */
export function parseTrustedProxies(value: string | undefined): TTrustedProxies {
  const entries = (value ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(unmapped(address));
    const bits = family === 4 ? 32 : 128;
    const length = prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (family === 0 || extra !== undefined || !(length >= 0 && length <= bits)) {
      throw new Error(`Invalid COUNTERSIGN_TRUSTED_PROXIES entry "${entry}": use IP addresses or CIDR ranges separated by commas, e.g. 10.0.0.0/8,127.0.0.1.`);
    }
    list.addSubnet(unmapped(address), length, family === 4 ? "ipv4" : "ipv6");
  }
  return { list, size: entries.length };
}


/** How long a request body may take to arrive in full (COUNTERSIGN_BODY_TIMEOUT_MS). */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;


/** `COUNTERSIGN_BODY_TIMEOUT_MS`: a whole number of milliseconds ≥ 1000; a clear error otherwise. */
export function parseBodyTimeout(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_BODY_TIMEOUT_MS;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 1000) throw new Error(`Invalid COUNTERSIGN_BODY_TIMEOUT_MS "${value}": use a whole number of milliseconds, at least 1000 (default ${DEFAULT_BODY_TIMEOUT_MS}).`);
  return ms;
}


/** Open streams per user and server process when COUNTERSIGN_MAX_STREAMS_PER_USER is unset. */
export const DEFAULT_MAX_STREAMS_PER_USER = 256;


/** `COUNTERSIGN_MAX_STREAMS_PER_USER`: a whole number ≥ 1, or `off` (null: no cap). */
export function parseMaxStreams(value: string | undefined): number | null {
  const text = (value ?? "").trim().toLowerCase();
  if (text === "") return DEFAULT_MAX_STREAMS_PER_USER;
  if (text === "off") return null;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(`Invalid COUNTERSIGN_MAX_STREAMS_PER_USER "${value}": use a whole number of at least 1, or "off".`);
  return Number(text);
}


/** The separate metrics port from its variable (unset or empty: none); a bad value stops the boot. */
export function parseMetricsPort(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === "") return null;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`COUNTERSIGN_METRICS_PORT must be a port number (0-65535), not "${raw}".`);
  return port;
}

/** How long the readiness check waits for the database by default (COUNTERSIGN_READY_TIMEOUT_MS). */
export const DEFAULT_READY_TIMEOUT_MS = 2000;

/** The readiness timeout from its variable; a bad value stops the boot. */
export function parseReadyTimeout(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return DEFAULT_READY_TIMEOUT_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1 || ms > 60_000) throw new Error(`COUNTERSIGN_READY_TIMEOUT_MS must be a whole number of milliseconds from 1 to 60000, not "${raw}".`);
  return ms;
}

/** `::ffff:10.0.0.1` and `10.0.0.1` are the same address. */
function unmapped(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}

const ZEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  COUNTERSIGN_DATA_DIR: z.string().default("./.data"),
  DATABASE_URL: z.union([z.literal(""), z.string().url()]).optional(),
  COUNTERSIGN_PUBLIC_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://countersign.example.com" }).optional(),
  COUNTERSIGN_BOUNDARY_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
  COUNTERSIGN_LEASE_MS: z.coerce.number().int().min(1000).default(15_000),
  /** How often pending actions are checked for expiry (a decider or reader of a due one expires it at once too). */
  COUNTERSIGN_EXPIRY_SWEEP_MS: z.coerce.number().int().min(100).max(3_600_000).default(1000),
  COUNTERSIGN_SUGGEST_MIN_REQUESTS: z.coerce.number().int().min(2).max(1_000_000).default(20),
  /** PostgreSQL connections per process (postgres.js pool); requests beyond it queue for a connection. */
  COUNTERSIGN_DB_POOL: z.coerce.number().int().min(1).max(500).default(10),
  COUNTERSIGN_RATE_LIMIT: z.string().optional(),
  /** Graceful shutdown: how long running attempts may go on after SIGTERM before they are interrupted (0: at once). */
  COUNTERSIGN_DRAIN_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  COUNTERSIGN_PAGES: z.enum(["on", "off"]).optional(),
  /** Signs console session cookies; short secrets are guessable. */
  BETTER_AUTH_SECRET: z.string().min(32, "must be at least 32 characters (e.g. openssl rand -base64 32)").optional(),
});

/** An environment: process.env, or a test's. */
export type TEnvironment = Readonly<Record<string, string | undefined>>;

/** COUNTERSIGN_REVIEWER*, with errors that name the variable (the reviewer's schema names its fields). */
function reviewerConfig(env: TEnvironment): TReviewerConfig {
  const timeout = env.COUNTERSIGN_REVIEWER_TIMEOUT_MS;
  if (timeout !== undefined && timeout !== "" && !/^\d+$/.test(timeout.trim())) throw new Error(`Invalid COUNTERSIGN_REVIEWER_TIMEOUT_MS "${timeout}": use a whole number of milliseconds (100 to 600000).`);
  try {
    return reviewerConfigFromEnv(env);
  } catch (error) {
    const issues = error instanceof z.ZodError ? error.issues : [];
    const names: Record<string, string> = { mode: "COUNTERSIGN_REVIEWER", model: "COUNTERSIGN_REVIEWER_BASE_URL and COUNTERSIGN_REVIEWER_MODEL", "model.baseURL": "COUNTERSIGN_REVIEWER_BASE_URL", "model.model": "COUNTERSIGN_REVIEWER_MODEL", "model.timeoutMs": "COUNTERSIGN_REVIEWER_TIMEOUT_MS", "model.responseFormat": "COUNTERSIGN_REVIEWER_RESPONSE_FORMAT" };
    if (issues.length === 0) throw error;
    throw new Error(issues.map((i) => `Invalid ${names[i.path.join(".")] ?? "COUNTERSIGN_REVIEWER"}: ${i.message}`).join("; "));
  }
}

/** COUNTERSIGN_EXEC_SANDBOX: auto (default), bwrap, user or none. */
function execSandboxMode(env: TEnvironment): string | undefined {
  const mode = (env.COUNTERSIGN_EXEC_SANDBOX ?? "auto").trim().toLowerCase() || "auto";
  if (mode !== "auto" && !(EXEC_SANDBOX_MODES as readonly string[]).includes(mode)) throw new Error(`Invalid COUNTERSIGN_EXEC_SANDBOX "${env.COUNTERSIGN_EXEC_SANDBOX}": use auto, bwrap, user or none.`);
  return env.COUNTERSIGN_EXEC_SANDBOX;
}

/** Everything the server reads from its environment, checked (server/app.ts wires it; nothing else reads process.env). */
export type TServerConfig = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  /** COUNTERSIGN_PUBLIC_URL: where people reach the server (links, cookies' Secure, HSTS); its origin counts as this server's. */
  publicUrl?: string;
  boundaryTimeoutMs: number;
  leaseMs: number;
  expirySweepMs: number;
  /** Policy suggestions: the fewest matching requests, all approved, a loosening needs (docs/analytics.md). */
  suggestMinRequests: number;
  dbPool: number;
  drainMs: number;
  rateLimit: TRateLimitConfig | null;
  /** COUNTERSIGN_TRUSTED_PROXIES: proxies whose X-Forwarded-For is believed (server/api/shared/client-address.ts). */
  trustedProxies: TTrustedProxies;
  /** COUNTERSIGN_BODY_TIMEOUT_MS: how long a request body may take to arrive (408 past it). */
  bodyTimeoutMs: number;
  logLevel: string;
  /** NODE_ENV is not `production`: Next.js serves its development build, and pages' CSP allows `'unsafe-eval'`. */
  development: boolean;
  /** COUNTERSIGN_PAGES (default on): Next.js serves the console pages; off: the API only. */
  pages: boolean;
  /** BETTER_AUTH_SECRET (unset: a secret generated once into the data directory). */
  authSecret?: string;
  /** COUNTERSIGN_SECRET_KEY, base64 of 32 bytes (unset: a key generated once into the data directory). */
  secretKey?: string;
  /** COUNTERSIGN_MAX_STREAMS_PER_USER (null: no cap). */
  maxStreamsPerUser: number | null;
  /** COUNTERSIGN_READY_TIMEOUT_MS: how long `/v1/readyz` waits for the database. */
  readyTimeoutMs: number;
  /** COUNTERSIGN_METRICS_PORT: a port serving only `GET /metrics` (null: none). */
  metricsPort: number | null;
  /** COUNTERSIGN_METRICS_TOKEN: a bearer for `GET /metrics` besides admins' keys (null: none). */
  metricsToken: string | null;
  /** COUNTERSIGN_EXEC_SANDBOX and COUNTERSIGN_EXEC_USER as set (checked); the sandbox itself is detected at boot (server/tools/exec-sandbox.ts). */
  execSandbox?: string;
  execUser?: string;
  /** COUNTERSIGN_EXEC_SANDBOX_SCOPE and COUNTERSIGN_EXEC_SANDBOX_IDLE_MS: one bubblewrap sandbox per session (default) or per command. */
  execSandboxReuse: TSandboxReuse;
  /** COUNTERSIGN_MEDIA_*: attachment limits and allowlist. */
  media: TMediaPolicy;
  /** COUNTERSIGN_REVIEWER*: the exec reviewer (off when unset). */
  reviewer: TReviewerConfig;
  /** COUNTERSIGN_PLUGINS_FILE and COUNTERSIGN_PLUGINS. */
  plugins: TPluginSource[];
  /** COUNTERSIGN_AGENTS_FILE, validated (null: unset, the built-in agents). */
  agentsFile: TLoadedAgents | null;
  /** COUNTERSIGN_OIDC_* and COUNTERSIGN_PASSWORD_LOGIN over the agents file's `sso` section (docs/sso.md). */
  signIn: TSignInConfig;
  /** COUNTERSIGN_NOTIFY_CONFIG, validated with its secrets resolved (null: unset). */
  notify: TNotifyConfig | null;
  /**
   * The environment itself, for what the configuration names by variable and reads when used: the
   * built-in agents (COUNTERSIGN_MODEL_*, COUNTERSIGN_MCP_SERVERS), an agent's `endpoint.apiKeyEnv`
   * and `exec.env`, the secrets a reloaded agents file names, the OTLP exporter's OTEL_* variables.
   */
  environment: TEnvironment;
};

/** Reads the environment once, with clear errors for bad values (every problem at once). */
export function loadConfig(env: TEnvironment = process.env): TServerConfig {
  const parsed = ZEnv.safeParse(env);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  /** One value read with its parser; a bad one is a problem, reported with the others. */
  const read = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      return undefined;
    }
  };
  const rateLimit = read(() => parseRateLimit(env.COUNTERSIGN_RATE_LIMIT));
  const trustedProxies = read(() => parseTrustedProxies(env.COUNTERSIGN_TRUSTED_PROXIES));
  const bodyTimeoutMs = read(() => parseBodyTimeout(env.COUNTERSIGN_BODY_TIMEOUT_MS));
  const maxStreamsPerUser = read(() => parseMaxStreams(env.COUNTERSIGN_MAX_STREAMS_PER_USER));
  read(() => env.COUNTERSIGN_SECRET_KEY && parseSecretKey(env.COUNTERSIGN_SECRET_KEY));
  const execSandbox = read(() => execSandboxMode(env));
  read(() => parseExecUser(env.COUNTERSIGN_EXEC_USER));
  const execSandboxReuse = read(() => parseSandboxReuse(env.COUNTERSIGN_EXEC_SANDBOX_SCOPE, env.COUNTERSIGN_EXEC_SANDBOX_IDLE_MS));
  // Read again when first needed (server/agents/catalog.ts), from the same environment.
  read(() => mcpServersFromEnv(env.COUNTERSIGN_MCP_SERVERS));
  read(() => modelAgentFromEnv(env));
  const reviewer = read(() => reviewerConfig(env));
  const notify = read(() => loadNotifyConfig(env));
  const readyTimeoutMs = read(() => parseReadyTimeout(env.COUNTERSIGN_READY_TIMEOUT_MS));
  const metricsPort = read(() => parseMetricsPort(env.COUNTERSIGN_METRICS_PORT));
  const media = read(() => mediaPolicyFromEnv(env));
  const plugins = read(() => pluginSourcesFromEnv(env));
  const agentsPath = env.COUNTERSIGN_AGENTS_FILE?.trim();
  const agentsFile = read(() => (agentsPath ? loadAgentsFile(agentsPath, env) : null));
  const signIn = read(() => signInConfigFrom(env, agentsFile?.file.sso));
  if (!parsed.success || problems.length > 0) throw new Error(`Invalid configuration: ${problems.join("; ")}`);
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.COUNTERSIGN_DATA_DIR),
    databaseUrl: e.DATABASE_URL || undefined,
    publicUrl: e.COUNTERSIGN_PUBLIC_URL,
    boundaryTimeoutMs: e.COUNTERSIGN_BOUNDARY_TIMEOUT_MS,
    leaseMs: e.COUNTERSIGN_LEASE_MS,
    expirySweepMs: e.COUNTERSIGN_EXPIRY_SWEEP_MS,
    suggestMinRequests: e.COUNTERSIGN_SUGGEST_MIN_REQUESTS,
    dbPool: e.COUNTERSIGN_DB_POOL,
    drainMs: e.COUNTERSIGN_DRAIN_MS,
    rateLimit: rateLimit ?? null,
    trustedProxies: trustedProxies as TTrustedProxies,
    bodyTimeoutMs: bodyTimeoutMs as number,
    logLevel: e.LOG_LEVEL,
    development: env.NODE_ENV !== "production",
    pages: e.COUNTERSIGN_PAGES !== "off",
    authSecret: e.BETTER_AUTH_SECRET,
    secretKey: env.COUNTERSIGN_SECRET_KEY || undefined,
    maxStreamsPerUser: maxStreamsPerUser ?? null,
    readyTimeoutMs: readyTimeoutMs as number,
    metricsPort: metricsPort ?? null,
    metricsToken: env.COUNTERSIGN_METRICS_TOKEN?.trim() || null,
    execSandbox,
    execUser: env.COUNTERSIGN_EXEC_USER,
    execSandboxReuse: execSandboxReuse as TSandboxReuse,
    media: media as TMediaPolicy,
    reviewer: reviewer as TReviewerConfig,
    plugins: plugins as TPluginSource[],
    agentsFile: agentsFile ?? null,
    notify: notify ?? null,
    signIn: signIn as TSignInConfig,
    environment: env,
  };
}

/** Where the CLI finds the server of a data directory: a Unix socket, owner-only (server/api/http/control.ts). */
export const controlSocketPath = (dataDir: string): string => `${dataDir}/control.sock`;

/**
 * Which database a configuration names, as the CLI prints it: the PGlite data directory, or the
 * PostgreSQL URL with its password replaced by `***` (a URL that does not parse is not printed).
 */
export function describeDatabase(options: { url?: string; pgliteDir: string }): string {
  if (!options.url) return `PGlite ${resolve(options.pgliteDir)}`;
  try {
    const url = new URL(options.url);
    if (url.password) url.password = "***";
    return `PostgreSQL ${url.toString()}`;
  } catch {
    return "PostgreSQL (DATABASE_URL does not parse as a URL)";
  }
}
