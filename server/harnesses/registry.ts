import type { TAgentConfig } from "../agents/types";
import type { Attempt } from "../host/attempt";
import { runModelLoop } from "./model-loop";
import { openAICompatibleDriver, parseModelInput } from "./openai-compatible";
import { parseScriptedInput, scriptedDriver, scriptedFallbackDriver } from "./scripted";

/** Runs the agent's harness over the attempt; every harness goes through the same host code path. */
export async function runHarness(attempt: Attempt): Promise<void> {
  const agent = attempt.agent;
  switch (agent.harness) {
    case "scripted":
      await runModelLoop(attempt, scriptedDriver(attempt.input), agent.fallbackModel ? scriptedFallbackDriver(attempt.input) : undefined);
      return;
    case "openai-compatible": {
      // The fallback model (tried once after an empty final turn) is another model id on the same endpoint.
      const tracer = attempt.deps.observe.tracing ? attempt.deps.observe.tracer : undefined;
      await runModelLoop(attempt, openAICompatibleDriver(agent, { tracer }), agent.fallbackModel ? openAICompatibleDriver(agent, { model: agent.fallbackModel, tracer }) : undefined);
      return;
    }
    default:
      throw new Error(`Unknown harness ${String(agent.harness)}.`);
  }
}

/** The options every harness's input may carry beside what the model reads. */
export type TInputOptions = { timeoutMs?: number; approvalTtlMs?: number; clientToolTtlMs?: number };

/** Validates `input` for the agent's harness (a script for `scripted`, a message for a model). */
export function parseAgentInput(agent: Pick<TAgentConfig, "harness">, input: unknown): { ok: true; value: TInputOptions } | { ok: false; message: string } {
  return agent.harness === "openai-compatible" ? parseModelInput(input) : parseScriptedInput(input);
}
