import type { AgentRegistry } from "../agents/registry";
import type { AgentsConfig } from "../agents/reload";
import type { DeviceHub } from "../devices/hub";
import type { TMcpServers } from "../mcp/port";
import type { TNotifyConfig } from "../notify/config";
import type { TObserve } from "../observe/port";
import type { TBaseDeps } from "../ports/deps";
import type { TLifecycleNotifier } from "../ports/lifecycle";
import type { TRunStarter } from "../ports/run-starter";
import type { TExecReviewer } from "../reviewer";
import type { TExecSandbox } from "../tools/exec-sandbox";
import type { ProcessCleanup } from "../tools/process-cleanup";
import type { ReceiptStore } from "./receipts";

/**
 * The dependency graph shared by the server, the CLI and tests: the infrastructure of the ports
 * (server/ports/deps.ts) and the parts assembled from the folders below the host. Only the host
 * and the layers above it take the whole of it.
 */
export type TDeps = TBaseDeps & {
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
  /** Notifications when configured: Slack interactions are verified with it. */
  notify?: { config: TNotifyConfig; publicUrl: string } | null;
  /** When notifications are configured: what `transact` queues with each transaction (lifecycle facts, Slack updates). */
  lifecycle?: TLifecycleNotifier | null;
  /** Metrics and tracing (server/observe): a port, so nothing here imports prom-client or the OTel SDK. */
  observe: TObserve;
};

/** The dependencies of services that settle pending actions and so may resume runs here. */
export type TRunDeps = TDeps & { host: TRunStarter };
