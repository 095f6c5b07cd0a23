import type { Attempt } from "../host/attempt";
import { runModelLoop } from "./model-loop";
import { scriptedDriver, scriptedFallbackDriver } from "./scripted";

/** Runs the agent's harness over the attempt; every harness goes through the same host code path. */
export async function runHarness(attempt: Attempt): Promise<void> {
  switch (attempt.agent.harness) {
    case "scripted":
      await runModelLoop(attempt, scriptedDriver(attempt.input), attempt.agent.fallbackModel ? scriptedFallbackDriver(attempt.input) : undefined);
      return;
    default:
      throw new Error(`Unknown harness ${String(attempt.agent.harness)}.`);
  }
}
