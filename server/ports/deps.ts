/**
 * The infrastructure every layer may be handed (types only): the database, the bus, the log, the
 * clock, the settings and the secret key. Folders below the host (auth, devices, notify, tools,
 * mcp, ...) take this or a `Pick` of it; the host's full dependencies (server/host/deps.ts) add
 * the parts assembled above this layer (agents, devices, MCP servers, reviewer, sandbox, ...).
 */
import type { Logger } from "pino";
import type { Db, DbKind } from "../../db/client";
import type { TMediaPolicy } from "../core/media";
import type { EventBus } from "./bus";

/** Process-wide settings the host and services read. */
export type THostConfig = {
  dataDir: string;
  /** How long a lease on an executing attempt lasts without renewal. */
  leaseMs: number;
  /** How long `/v1` waits for the next boundary before answering 504. */
  boundaryTimeoutMs: number;
  /** How often pending approvals and client-tool requests are checked for expiry. */
  expirySweepMs: number;
  /** Policy suggestions: the fewest matching requests, all approved, a loosening needs (COUNTERSIGN_SUGGEST_MIN_REQUESTS). */
  suggestMinRequests: number;
  /** Attachment limits and allowlist (COUNTERSIGN_MEDIA_*). */
  media: TMediaPolicy;
  /** The server's environment (server/config/index.ts), for the variables an agent names and that are read when used: `endpoint.apiKeyEnv`, `exec.env`. */
  environment: Readonly<Record<string, string | undefined>>;
};

/** The infrastructure part of the dependencies (see above). */
export type TBaseDeps = {
  db: Db;
  dbKind: DbKind;
  bus: EventBus;
  log: Logger;
  config: THostConfig;
  now: () => Date;
  /** Encrypts secret answers at rest. */
  secretKey: Buffer;
};
