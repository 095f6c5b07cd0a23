import type { SpanContext } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { Db, DbKind } from "../../db/client";
import type { TResponseRow } from "../../db/repositories/responses";
import type { responseSteps } from "../../db/schema";
import type { TMediaPolicy } from "../core/media";
import type { AgentRegistry } from "../agents/registry";
import type { AgentsConfig } from "../agents/reload";
import type { DeviceHub } from "../devices/hub";
import type { ProcessCleanup } from "../devices/process-cleanup";
import type { TMcpServers } from "../mcp/port";
import type { TNotifyConfig } from "../notify/config";
import type { TObserve } from "../observe/port";
import type { TExecReviewer } from "../reviewer";
import type { TExecSandbox } from "../tools/exec-sandbox";
import type { EventBus } from "./bus";
import type { ReceiptStore } from "./receipts";

/** Process-wide settings the host and services read. */
export type THostConfig = {
  dataDir: string;
  /** How long a lease on an executing attempt lasts without renewal. */
  leaseMs: number;
  /** How long `/v1` waits for the next boundary before answering 504. */
  boundaryTimeoutMs: number;
  /** How often pending approvals and client-tool requests are checked for expiry. */
  expirySweepMs: number;
  /** Attachment limits and allowlist (COUNTERSIGN_MEDIA_*). */
  media: TMediaPolicy;
  /** The server's environment (server/config.ts), for the variables an agent names and that are read when used: `endpoint.apiKeyEnv`, `exec.env`. */
  environment: Readonly<Record<string, string | undefined>>;
};

/** The dependency graph shared by the server, the CLI and tests. */
export type TDeps = {
  db: Db;
  dbKind: DbKind;
  bus: EventBus;
  log: Logger;
  config: THostConfig;
  now: () => Date;
  /** Encrypts secret answers at rest. */
  secretKey: Buffer;
  /** Transient resolution receipts of questions. */
  receipts: ReceiptStore;
  /** The configured exec reviewer for policy `review`; null means every review asks a person. */
  reviewer: TExecReviewer | null;
  /** The agents this server serves (assembled at boot; tests and embedders may register more). */
  agents: AgentRegistry;
  /**
   * The reloadable agents configuration (COUNTERSIGN_AGENTS_FILE): reload, effective view. Its
   * `onReloaded` hook is the one call site for the admin trail's "config reloaded" event.
   */
  agentsConfig?: AgentsConfig;
  /** Where approved commands run (detected once at boot, see server/tools/exec-sandbox.ts). */
  sandbox: TExecSandbox;
  /** The command trees this process's runs started: refused once a run is revoked, stopped on cancel. */
  processes: ProcessCleanup;
  /** The paired devices connected to this process. */
  devices: DeviceHub;
  /** The MCP servers this process started for agents (stopped at shutdown). */
  mcp: TMcpServers;
  /** Notifications when configured: lifecycle facts are enqueued by `transact`, Slack interactions verified with it. */
  notify?: { config: TNotifyConfig; publicUrl: string } | null;
  /** Metrics and tracing (server/observe): a port, so nothing here imports prom-client or the OTel SDK. */
  observe: TObserve;
};

/** A run a transaction moved back to executing and claimed (lease) for this process's host. */
export type TClaimedRun = {
  row: TResponseRow;
  /** Tool calls the claiming transaction marked "running" with this claim run in this attempt. */
  claim: string;
  steps: Array<typeof responseSteps.$inferSelect>;
  /** Whether steering messages were queued when it was claimed (later ones are announced on the bus). */
  steeringQueued: boolean;
  /** The session's workspace, when the claiming transaction read it. */
  workspaceDir?: string;
  /** When the transaction that settled a pending action resumed it (ms since epoch): the resume latency metric. */
  resumedAt?: number;
  /** The span of the decision that resumed it, in this process: the resumed run's span links to it. */
  resumedBy?: SpanContext;
};

/** What starts a claimed run in this process (the host); services never import the host itself. */
export type TRunStarter = {
  id: string;
  startClaimed: (run: TClaimedRun) => void;
  /** False when the agent's harness keeps steering and answers in the run owner's profile (`supportsCrossProfileSteering: false`). */
  crossProfileSteering?: (agent: string) => boolean;
  /** True when the agent's harness answers side questions (plugin API 1.2). */
  answersSideQuestions?: (agent: string) => boolean;
};

/** The dependencies of services that settle pending actions and so may resume runs here. */
export type TRunDeps = TDeps & { host: TRunStarter };
