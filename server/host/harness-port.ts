import type { TAgentConfig } from "../agents/types";
import type { Attempt } from "./attempt";
import type { TSideQuestionHandler } from "../../plugin-sdk/side-questions";

/** The options every harness's input may carry beside what the model reads. */
export type TInputOptions = { timeoutMs?: number; approvalTtlMs?: number; clientToolTtlMs?: number };

export type TParsedInput = { ok: true; value: TInputOptions } | { ok: false; message: string };

/**
 * The harnesses as the host uses them: it runs each attempt on its agent's harness and asks what
 * the harness allows. Harnesses drive the host's attempts, so they sit above the host: the
 * registry (server/harnesses/registry.ts) implements this and the composition root hands it over.
 */
export type THarnesses = {
  find(id: string): { supportsCrossProfileSteering?: boolean; sideQuestion?: TSideQuestionHandler } | undefined;
  /** Runs the agent's harness over the attempt. */
  run(attempt: Attempt): Promise<void>;
  /** Validates `input` for the agent's harness. */
  parseAgentInput(agent: Pick<TAgentConfig, "harness" | "name">, input: unknown): TParsedInput;
};
