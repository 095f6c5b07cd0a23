import { z } from "zod";
import type { TAgentEndPayload } from "../host/attempt-lifecycle";
import { collectCardDetailsTool, getPageContextTool } from "../tools/client-tools";
import { echoTool, execTool } from "../tools/host-tools";
import { askUserTool, confirmUrlTool, requestInputTool, requestSecretTool } from "../tools/question-tools";
import type { TTool } from "../tools/types";

/** `always`: a person decides; `never`: runs without a prompt; `review`: the exec reviewer decides first. */
export const APPROVAL_POLICIES = ["always", "never", "review"] as const;

export type TAgentConfig = {
  name: string;
  harness: "scripted";
  model: string;
  description: string;
  tools: TTool[];
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
};

/** The agents this installation serves; the first is the default. */
export const AGENTS: readonly TAgentConfig[] = [
  {
    name: "scripted",
    harness: "scripted",
    model: "scripted",
    description: "A deterministic model that plays the script given as input; for demos, tests and benchmarks.",
    tools: [execTool, echoTool, getPageContextTool, collectCardDetailsTool, askUserTool, requestSecretTool, requestInputTool, confirmUrlTool],
    approval: { exec: "always", echo: "never" },
    approvalTtlMs: 15 * 60_000,
    clientToolTtlMs: 5 * 60_000,
    maxTurns: 64,
    fallbackModel: "scripted-fallback",
  },
  {
    name: "scripted-reviewed",
    harness: "scripted",
    model: "scripted",
    description: "The scripted agent with its exec calls reviewed by the configured exec reviewer first.",
    tools: [execTool, echoTool, getPageContextTool, collectCardDetailsTool, askUserTool, requestSecretTool, requestInputTool, confirmUrlTool],
    approval: { exec: "review", echo: "never" },
    approvalTtlMs: 15 * 60_000,
    clientToolTtlMs: 5 * 60_000,
    maxTurns: 64,
  },
];

export const DEFAULT_AGENT = "scripted";

/** Looks up an agent by name. */
export const findAgent = (name: string): TAgentConfig | undefined => AGENTS.find((a) => a.name === name);

export const ZAgentName = z.string().min(1).max(64);
