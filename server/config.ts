import { resolve } from "node:path";
import { z } from "zod";
import { parseBodyTimeout } from "./api/http/body-deadline";
import { parseTrustedProxies, type TTrustedProxies } from "./api/shared/client-address";
import { parseRateLimit, type TRateLimitConfig } from "./api/http/rate-limit";
import { parseMaxStreams } from "./api/shared/open-connections";
import { parseMetricsPort } from "./api/http/metrics";
import { loadAgentsFile } from "./agents/file-config";
import { mediaPolicyFromEnv } from "./core/media";
import { pluginSourcesFromEnv } from "./plugins/loader";
import { parseReadyTimeout } from "./services/readiness";
import { modelAgentFromEnv } from "./agents/model-agent";
import { parseSecretKey } from "./host/secret-store";
import { mcpServersFromEnv } from "./mcp/config";
import { loadNotifyConfig } from "./notify/config";
import { reviewerConfigFromEnv } from "./reviewer";
import { EXEC_SANDBOX_MODES, parseExecUser } from "./tools/exec-sandbox";

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

/** Environment variables whose values are read elsewhere: each checked here with the parser that reads it, so a bad one stops the start. */
const CHECKS: Array<[string, (env: NodeJS.ProcessEnv) => unknown]> = [
  ["COUNTERSIGN_RATE_LIMIT", (env) => parseRateLimit(env.COUNTERSIGN_RATE_LIMIT)],
  ["COUNTERSIGN_TRUSTED_PROXIES", (env) => parseTrustedProxies(env.COUNTERSIGN_TRUSTED_PROXIES)],
  ["COUNTERSIGN_BODY_TIMEOUT_MS", (env) => parseBodyTimeout(env.COUNTERSIGN_BODY_TIMEOUT_MS)],
  ["COUNTERSIGN_MAX_STREAMS_PER_USER", (env) => parseMaxStreams(env.COUNTERSIGN_MAX_STREAMS_PER_USER)],
  ["COUNTERSIGN_SECRET_KEY", (env) => env.COUNTERSIGN_SECRET_KEY && parseSecretKey(env.COUNTERSIGN_SECRET_KEY)],
  [
    "COUNTERSIGN_EXEC_SANDBOX",
    (env) => {
      const mode = (env.COUNTERSIGN_EXEC_SANDBOX ?? "auto").trim().toLowerCase() || "auto";
      if (mode !== "auto" && !(EXEC_SANDBOX_MODES as readonly string[]).includes(mode)) throw new Error(`Invalid COUNTERSIGN_EXEC_SANDBOX "${env.COUNTERSIGN_EXEC_SANDBOX}": use auto, bwrap, user or none.`);
    },
  ],
  ["COUNTERSIGN_EXEC_USER", (env) => parseExecUser(env.COUNTERSIGN_EXEC_USER)],
  ["COUNTERSIGN_MCP_SERVERS", (env) => mcpServersFromEnv(env.COUNTERSIGN_MCP_SERVERS)],
  ["COUNTERSIGN_MODEL_*", (env) => modelAgentFromEnv(env)],
  [
    "COUNTERSIGN_REVIEWER_*",
    (env) => {
      const timeout = env.COUNTERSIGN_REVIEWER_TIMEOUT_MS;
      if (timeout !== undefined && timeout !== "" && !/^\d+$/.test(timeout.trim())) throw new Error(`Invalid COUNTERSIGN_REVIEWER_TIMEOUT_MS "${timeout}": use a whole number of milliseconds (100 to 600000).`);
      try {
        reviewerConfigFromEnv(env);
      } catch (error) {
        const issues = error instanceof z.ZodError ? error.issues : [];
        const names: Record<string, string> = { mode: "COUNTERSIGN_REVIEWER", model: "COUNTERSIGN_REVIEWER_BASE_URL and COUNTERSIGN_REVIEWER_MODEL", "model.baseURL": "COUNTERSIGN_REVIEWER_BASE_URL", "model.model": "COUNTERSIGN_REVIEWER_MODEL", "model.timeoutMs": "COUNTERSIGN_REVIEWER_TIMEOUT_MS", "model.responseFormat": "COUNTERSIGN_REVIEWER_RESPONSE_FORMAT" };
        if (issues.length === 0) throw error;
        throw new Error(issues.map((i) => `Invalid ${names[i.path.join(".")] ?? "COUNTERSIGN_REVIEWER"}: ${i.message}`).join("; "));
      }
    },
  ],
  ["COUNTERSIGN_NOTIFY_CONFIG", (env) => loadNotifyConfig(env)],
  ["COUNTERSIGN_READY_TIMEOUT_MS", (env) => parseReadyTimeout(env.COUNTERSIGN_READY_TIMEOUT_MS)],
  ["COUNTERSIGN_METRICS_PORT", (env) => parseMetricsPort(env.COUNTERSIGN_METRICS_PORT)],
  ["COUNTERSIGN_MEDIA_*", (env) => mediaPolicyFromEnv(env)],
  ["COUNTERSIGN_PLUGINS_FILE", (env) => pluginSourcesFromEnv(env)],
  ["COUNTERSIGN_AGENTS_FILE", (env) => env.COUNTERSIGN_AGENTS_FILE?.trim() && loadAgentsFile(env.COUNTERSIGN_AGENTS_FILE.trim(), env)],
];

export type TServerConfig = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  publicUrl?: string;
  boundaryTimeoutMs: number;
  leaseMs: number;
  expirySweepMs: number;
  dbPool: number;
  drainMs: number;
  rateLimit: TRateLimitConfig | null;
  /** COUNTERSIGN_TRUSTED_PROXIES: proxies whose X-Forwarded-For is believed (server/api/http/client-address.ts). */
  trustedProxies: TTrustedProxies;
  /** COUNTERSIGN_BODY_TIMEOUT_MS: how long a request body may take to arrive (408 past it). */
  bodyTimeoutMs: number;
  logLevel: string;
};

/** Reads the environment once, with clear errors for bad values. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TServerConfig {
  const parsed = ZEnv.safeParse(env);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  for (const [, check] of CHECKS) {
    try {
      check(env);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
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
    dbPool: e.COUNTERSIGN_DB_POOL,
    drainMs: e.COUNTERSIGN_DRAIN_MS,
    rateLimit: parseRateLimit(e.COUNTERSIGN_RATE_LIMIT),
    trustedProxies: parseTrustedProxies(env.COUNTERSIGN_TRUSTED_PROXIES),
    bodyTimeoutMs: parseBodyTimeout(env.COUNTERSIGN_BODY_TIMEOUT_MS),
    logLevel: e.LOG_LEVEL,
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
