import { z } from "zod";
import type { TModelEndpoint } from "../../plugin-sdk/loops";
import type { TMcpServersSource } from "../mcp/config";
import type { TTool } from "../tools/types";
import type { TArgumentPredicate, TApprovalPolicy, TApprovers } from "../core/agent-policy";
import type { TQuorum, TSelfApproval } from "../core/separation-of-duties";
import type { TRisk } from "../core/vocabulary";

/** What agent_end hooks receive once a response is finalized. */
export type TAgentEndPayload = { event: { responseId: string; sessionId: string; agent: string }; ctx: { userId: string } };

/** `always`: a person decides; `never`: runs without a prompt; `review`: the exec reviewer decides first. */
export const APPROVAL_POLICIES = ["always", "never", "review"] as const;

/** A shadow policy: per tool who decides and its predicates, and action entries, each replacing the live one. */
export type TShadowPolicy = { approval?: Record<string, (typeof APPROVAL_POLICIES)[number]>; predicates?: Record<string, TArgumentPredicate[]>; actions?: Record<string, TActionPolicy> };

/**
 * The policy of an action a caller runs itself and asks about first (`POST /v1/approvals`, the
 * MCP face's `request_approval` and `approval_prompt`): who decides, the risk, what the approver
 * reads, the arguments' JSON Schema, argument predicates, and who may decide (server/agents/actions.ts).
 */
export type TActionPolicy = {
  /** `always` a person (default), `review` the exec reviewer first, `never` nobody. */
  approval: TApprovalPolicy;
  risk: TRisk;
  /** What the approver reads when the request brings no message; also given to the reviewer. */
  description?: string;
  /** A JSON Schema (2020-12) the arguments must satisfy (422 naming the field otherwise). */
  schema?: Record<string, unknown>;
  predicates?: TArgumentPredicate[];
  /** Who may decide this action's approvals (instead of the agent's `approvers`). */
  approvers?: TApprovers;
  /** Distinct approvers a high-risk approval of this action needs (instead of the agent's `quorum`). */
  quorum?: TQuorum;
};

export type TAgentConfig = {
  name: string;
  /**
   * The harness id: `scripted` plays `input.script`; `openai-compatible` asks `model` at `endpoint`
   * (server/harnesses/openai-compatible.ts); or a harness an enabled plugin registered (docs/plugins.md).
   */
  harness: string;
  /** The model id sent to the endpoint. */
  model: string;
  /** Where an `openai-compatible` agent's model lives: base URL, API key variable, headers, timeouts. */
  endpoint?: TModelEndpoint;
  /** The system prompt of an `openai-compatible` agent. */
  system?: string;
  description: string;
  tools: TTool[];
  /**
   * The tools a native-loop plugin harness runs itself (docs/plugins.md): the host decides each call
   * through `runBeforeToolCall` (policy `approval[name]`, action `native:<name>`), never runs them.
   */
  nativeTools?: string[];
  /** Tool name → who decides; tools not listed never need approval. */
  approval: Record<string, (typeof APPROVAL_POLICIES)[number]>;
  approvalTtlMs: number;
  clientToolTtlMs: number;
  maxTurns: number;
  /** Active execution time of one attempt before it is cancelled with reason `timeout` (default 30 min). */
  executionTimeoutMs?: number;
  /** How long finalization may take once settlement begins (default 30 s). */
  settlementTimeoutMs?: number;
  /** Tried once when a finished turn has no visible text (empty, reasoning-only or planning-only). */
  fallbackModel?: string;
  /** agent_end hooks, started after the response is finalized; their failures never change it. */
  onAgentEnd?: Array<(payload: TAgentEndPayload) => unknown>;
  /**
   * The exact node commands this harness runs on paired devices. Each attempt copies the list when
   * it is created; a Full access session may run only these without a prompt. It narrows, never grants.
   */
  requiredNodeCommands?: string[];
  /**
   * MCP servers (stdio or Streamable HTTP) whose tools the agent may call as `mcp_<server>_<tool>`
   * (action `mcp:<server>.<tool>`; policy by action, the server's `approval`, or a pattern such as
   * `mcp:*`; an unnamed MCP tool needs a person). See server/mcp.
   */
  mcpServers?: TMcpServersSource;
  /**
   * Standing grants an approver may give when approving (off unless set): `session` allows the
   * exact operation for the rest of the session, `maxDays` allows it for up to that many days.
   */
  grants?: { session?: boolean; maxDays?: number };
  /**
   * Whether the exec reviewer re-reviews arguments an approver edited before the edit is accepted.
   * Default: when the tool's policy is `review`.
   */
  reviewEdits?: boolean;
  /**
   * What approved commands (`exec`) may use beyond the sandbox's minimum: `network` (default off;
   * only the bubblewrap sandbox can take it away) and `env`, names of server environment variables
   * passed through by name (nothing else of the server's environment reaches a command).
   */
  exec?: { network?: boolean; env?: string[] };
  /**
   * Whether the person who started a run may decide its approvals (default `operators`): `never`,
   * `operators` (operators and admins may, members need someone else) or `always`.
   */
  selfApproval?: TSelfApproval;
  /** Distinct approvers a high-risk approval needs (e.g. `{ high: 2 }`); the requester never counts. */
  quorum?: TQuorum;
  /**
   * Argument predicates per tool name (server/core/agent-policy.ts): a call whose arguments match
   * gets the predicate's risk (raised or lowered) and/or needs a person's approval whatever `approval` says.
   */
  predicates?: Record<string, TArgumentPredicate[]>;
  /** Who may decide this agent's approvals (besides the role rule): these roles or these people by email. Unset: any decider. */
  approvers?: TApprovers;
  /**
   * Actions callers run themselves, by name, `*` (the default for undeclared names) or a pattern
   * such as `coding:*` (the most specific match wins). An action no entry names gets the
   * installation's default: a person approves, risk medium.
   */
  actions?: Record<string, TActionPolicy>;
  /**
   * A shadow policy (docs/analytics.md#shadow-rules): the same keys as the live one, overriding it
   * for an evaluation that decides nothing. Every gated request is also evaluated against it; where
   * it would decide differently, the request records what the shadow would have done.
   */
  shadow?: TShadowPolicy;
  /** `any` (default): any action name may be asked about; `declared`: only names `actions` lists (422 otherwise). */
  externalActions?: "any" | "declared";
};

export const ZAgentName = z.string().min(1).max(64);
