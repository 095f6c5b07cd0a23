import { resolve } from "node:path";
import { z } from "zod";
import { parseBodyTimeout } from "./api/http/body-deadline";
import { parseTrustedProxies, type TTrustedProxies } from "./api/http/client-address";
import { parseRateLimit, type TRateLimitConfig } from "./api/http/rate-limit";

const ZEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  COUNTERSIGN_DATA_DIR: z.string().default("./.data"),
  DATABASE_URL: z.union([z.literal(""), z.string().url()]).optional(),
  COUNTERSIGN_PUBLIC_URL: z.string().url().optional(),
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
});

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
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid configuration: ${problems}`);
  }
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
