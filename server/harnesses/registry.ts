import { DomainError } from "../core/errors";
import type { TAgentConfig } from "../agents/types";
import type { Attempt } from "../host/attempt";
import type { THarnesses, TParsedInput } from "../host/harness-port";
import type { TSideQuestionHandler } from "../../plugin-sdk/side-questions";
import { runModelLoop } from "./model-loop";
import { openAICompatibleDriver, parseModelInput } from "./openai-compatible";
import { parseScriptedInput, scriptedDriver, scriptedFallbackDriver } from "./scripted";

/**
 * A harness the host can run: the built-in ones and those plugins register. Every harness goes
 * through the same host code path (the attempt, its steps, its tool calls, its capabilities).
 */
export type THarness = {
  id: string;
  /** `builtin`, or the id of the plugin that registered it. */
  source: string;
  /** A native loop: it runs its own tools and asks the host before each (server/harnesses/native-loop.ts). */
  native?: boolean;
  /** Validates a run's input before the run is created (a refusal is a 400 with the message). */
  parseInput: (input: unknown) => TParsedInput;
  /** Runs one attempt over the response. */
  run: (attempt: Attempt) => Promise<void>;
  /** `false`: steering messages and question answers are accepted only from the run owner's profile. Omitted: allowed. */
  supportsCrossProfileSteering?: boolean;
  /** Answers side questions about a run (server/host/side-questions.ts). Omitted: the harness answers none. */
  sideQuestion?: TSideQuestionHandler;
};

/** The built-in harnesses: `scripted` plays `input.script`; `openai-compatible` asks the agent's model endpoint. */
export const BUILTIN_HARNESSES: readonly THarness[] = [
  {
    id: "scripted",
    source: "builtin",
    parseInput: parseScriptedInput,
    run: (attempt) => runModelLoop(attempt, scriptedDriver(attempt.input), attempt.agent.fallbackModel ? scriptedFallbackDriver(attempt.input) : undefined),
  },
  {
    id: "openai-compatible",
    source: "builtin",
    parseInput: parseModelInput,
    // The fallback model (tried once after an empty final turn) is another model id on the same endpoint.
    run: (attempt) => {
      // Model calls carry the AI SDK's telemetry when tracing is on.
      const tracer = attempt.deps.observe.tracing ? attempt.deps.observe.tracer : undefined;
      // The endpoint's API key is read from the server's environment at each call (apiKeyEnv).
      const environment = attempt.deps.config.environment;
      return runModelLoop(attempt, openAICompatibleDriver(attempt.agent, { tracer, environment }), attempt.agent.fallbackModel ? openAICompatibleDriver(attempt.agent, { model: attempt.agent.fallbackModel, tracer, environment }) : undefined);
    },
  },
];

/** The harnesses of one server, by id (built-in ones first, then plugins'). Ids are unique. */
export class HarnessRegistry implements THarnesses {
  private readonly harnesses = new Map<string, THarness>();

  constructor(harnesses: readonly THarness[] = BUILTIN_HARNESSES) {
    for (const harness of harnesses) this.register(harness);
  }

  /** Adds a harness; returns the function that removes it again. */
  register(harness: THarness): () => void {
    const existing = this.harnesses.get(harness.id);
    if (existing) throw new Error(`A harness with id ${harness.id} is already registered (by ${existing.source}).`);
    this.harnesses.set(harness.id, harness);
    return () => {
      if (this.harnesses.get(harness.id) === harness) this.harnesses.delete(harness.id);
    };
  }

  find(id: string): THarness | undefined {
    return this.harnesses.get(id);
  }

  list(): THarness[] {
    return [...this.harnesses.values()];
  }

  /** Runs the agent's harness over the attempt. */
  async run(attempt: Attempt): Promise<void> {
    const harness = this.find(attempt.agent.harness);
    if (!harness) throw new DomainError("conflict", `The harness ${attempt.agent.harness} of agent ${attempt.agent.name} is not loaded on this server (is its plugin enabled?).`);
    await harness.run(attempt);
  }

  /** Validates `input` for the agent's harness (a script for `scripted`, a message for a model, the plugin's own check). */
  parseAgentInput(agent: Pick<TAgentConfig, "harness" | "name">, input: unknown): TParsedInput {
    const harness = this.find(agent.harness);
    if (!harness) return { ok: false, message: `The agent ${agent.name} runs on harness ${agent.harness}, which is not loaded here.` };
    return harness.parseInput(input);
  }
}

