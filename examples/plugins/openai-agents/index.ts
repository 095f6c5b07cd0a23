/**
 * A harness plugin wrapping the OpenAI Agents SDK (`@openai/agents`) as a native loop (plugin API
 * 1.2), loaded only through the plugins configuration (never imported by the host). The SDK runs
 * its own loop and its own function tools against the agent's OpenAI-compatible endpoint
 * (Chat Completions). Every tool is given to the SDK with `needsApproval`, so the SDK stops before
 * each call (`result.interruptions`); the plugin asks the host (`runBeforeToolCall`), which applies
 * the agent's policy: tools this plugin marks `needsApproval` are registered with policy `always`,
 * so a person decides in Countersign (the run is `requires_action` meanwhile). Approved: the SDK
 * runs the tool (`state.approve`); denied: the approver's reply goes to the model as the call's
 * result (`state.reject`) and nothing runs. (The host refuses an approver's edit of a native call;
 * should a decision ever carry other arguments, the SDK cannot run them, so the call is rejected
 * with a message naming them.)
 *
 * Plugin API 1.2: `page_title` is a client tool (marked `client` on the tool surface): once the gate
 * allowed it, the host opens a client-tool request (`requires_action`, `POST /v1/client-tools/{id}`)
 * and the run suspends; the re-run attempt's decision carries the client's output, which the SDK
 * tool returns to the model (nothing runs here). `ask_user` asks the run's owner a question through
 * the host's question dispatcher (`hostCapabilities.questions.ask`): the run is `requires_action`
 * while the SDK tool waits, the answer (`question.resolve` on /v1, or the console) goes back to the
 * tool, which returns it (or that the person declined) to the model.
 *
 * After a suspension the host runs the attempt again: the SDK asks its model from the start, and
 * the identical call gets the recorded decision without a person being asked again; a call whose
 * output was recorded before is answered from it instead of running twice.
 *
 * Endpoint (read when the plugin registers): COUNTERSIGN_EXAMPLE_MODEL_URL, COUNTERSIGN_EXAMPLE_MODEL
 * (default `example`), COUNTERSIGN_EXAMPLE_MODEL_KEY_ENV (the variable holding the API key).
 */
import { Agent, OpenAIChatCompletionsModel, type RunToolApprovalItem, Runner, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import type { TCountersignPlugin, TNativeAttemptParams, TNativeToolDecision } from "../../../plugin-sdk";

/** What each target was deployed to so far in this process (the example's side effect, so a test can count runs). */
const deployments = new Map<string, number>();

type THost = TNativeAttemptParams["hostCapabilities"];

/** Asks the run's owner one free-text question and waits for the answer (the run is `requires_action` meanwhile). */
async function askUser(host: THost, question: string, signal: AbortSignal): Promise<string> {
  const outcome = await host.questions.ask({ questions: [{ questionId: "answer", header: "Question", question, options: [], isOther: true }], authority: { kind: "unscoped" }, signal });
  if (outcome.status === "answered") return `The person answered: ${(outcome.answers.answer ?? []).join(", ")}`;
  return outcome.status === "declined" ? "The person declined to answer." : `The question got no answer (${outcome.status}).`;
}

type TToolSpec = {
  name: string;
  description: string;
  parameters: z.ZodObject;
  needsApproval: boolean;
  /** The connected client runs it (a client-tool request on /v1); the plugin never does. */
  client?: true;
  run?: (args: Record<string, string>, host: THost, signal: AbortSignal) => string | Promise<string>;
};

/** The SDK tools, `needsApproval` as the plugin's author marks them; the host's policy follows the mark. */
const TOOL_SPECS: readonly TToolSpec[] = [
  {
    name: "deploy",
    description: "Deploy the given target.",
    parameters: z.object({ target: z.string() }),
    needsApproval: true,
    run: ({ target = "" }) => {
      const n = (deployments.get(target) ?? 0) + 1;
      deployments.set(target, n);
      return `deployed ${target} (deployment #${n})`;
    },
  },
  {
    name: "status",
    description: "Report the deployment count of a target.",
    parameters: z.object({ target: z.string() }),
    needsApproval: false,
    run: ({ target = "" }) => `${target}: ${deployments.get(target) ?? 0} deployment(s)`,
  },
  {
    name: "page_title",
    description: "The title of the page open in the user's browser (the connected client runs this tool).",
    parameters: z.object({}),
    needsApproval: false,
    client: true,
  },
  {
    name: "ask_user",
    description: "Ask the person who started this run one question and wait for the answer.",
    parameters: z.object({ question: z.string() }),
    needsApproval: false,
    run: ({ question = "" }, host, signal) => askUser(host, question, signal),
  },
];

const callIdOf = (item: RunToolApprovalItem): string | undefined => ("callId" in item.rawItem ? (item.rawItem.callId as string) : undefined);
const argsOf = (item: RunToolApprovalItem): Record<string, unknown> => JSON.parse(("arguments" in item.rawItem ? (item.rawItem.arguments as string) : "") || "{}") as Record<string, unknown>;

const plugin: TCountersignPlugin = {
  register(api) {
    api.registerHarness({
      id: "openai-agents",
      parseInput: (input) => (typeof input === "string" && input.trim() !== "" ? { ok: true } : { ok: false, message: "The openai-agents harness takes a text input." }),
      run: async ({ input, agent, hostCapabilities, signal }) => {
        if (!agent.endpoint) throw new Error("The openai-agents agent has no endpoint: set COUNTERSIGN_EXAMPLE_MODEL_URL.");
        hostCapabilities.finalizeAgentToolAvailability({ tools: TOOL_SPECS.map((t) => ({ name: t.name, ...(t.client ? { client: true } : {}) })) });
        // The host's decision of each interrupted call, by the SDK's call id: the tool's execute reads it.
        const decided = new Map<string, Extract<TNativeToolDecision, { allow: true }>>();
        const tools = TOOL_SPECS.map((spec) =>
          tool({
            name: spec.name,
            description: spec.description,
            parameters: spec.parameters,
            // The SDK stops before every call; the host decides (policy, approval, grants).
            needsApproval: true,
            execute: async (args, _context, details) => {
              const decision = decided.get(details?.toolCall?.callId ?? "");
              if (!decision) return "The host did not allow this call; it was not run.";
              // A client tool: the connected client ran it and the host recorded its output.
              if (decision.client) return JSON.stringify(decision.client.output);
              if (decision.replayed?.output !== undefined) return decision.replayed.output as string;
              if (!spec.run) return `The tool ${spec.name} does not run in this loop.`;
              const output = await spec.run(args as Record<string, string>, hostCapabilities, signal);
              await hostCapabilities.recordToolResult(decision.callId, output);
              return output;
            },
          }),
        );
        const model = new OpenAIChatCompletionsModel(
          new OpenAI({ baseURL: agent.endpoint.baseURL, apiKey: agent.endpoint.apiKey ?? "none", defaultHeaders: agent.endpoint.headers, maxRetries: 0 }),
          agent.model,
        );
        const sdkAgent = new Agent({ name: agent.name, instructions: agent.system ?? "You are a careful deployment assistant.", model, tools });
        const runner = new Runner({ tracingDisabled: true });
        let result = await runner.run(sdkAgent, input as string, { signal });
        for (let round = 0; result.interruptions.length > 0; round++) {
          if (round >= 16) throw new Error("The SDK kept asking for approvals (16 rounds); stopping.");
          for (const item of result.interruptions) {
            const args = argsOf(item);
            // A person may have to decide: the host's suspension propagates from here and the run waits.
            const decision = await hostCapabilities.runBeforeToolCall({ toolName: item.name ?? "", args });
            if (!decision.allow) {
              result.state.reject(item, { message: decision.message });
            } else if (JSON.stringify(decision.args) !== JSON.stringify(args)) {
              result.state.reject(item, { message: `The approver changed the arguments to ${JSON.stringify(decision.args)}; this call did not run.` });
            } else {
              decided.set(callIdOf(item) ?? "", decision);
              result.state.approve(item);
            }
          }
          result = await runner.run(sdkAgent, result.state, { signal });
        }
        return { text: typeof result.finalOutput === "string" ? result.finalOutput : JSON.stringify(result.finalOutput ?? "") };
      },
    });
    const baseURL = process.env.COUNTERSIGN_EXAMPLE_MODEL_URL?.trim();
    api.registerAgent({
      name: "openai-agents",
      harness: "openai-agents",
      model: process.env.COUNTERSIGN_EXAMPLE_MODEL?.trim() || "example",
      description: "The OpenAI Agents SDK example plugin's agent: deploys after a person approved, asks the client for the page title and the person for answers.",
      tools: [],
      nativeTools: TOOL_SPECS.map((t) => t.name),
      approval: Object.fromEntries(TOOL_SPECS.map((t) => [t.name, t.needsApproval ? "always" : "never"])),
      ...(baseURL ? { endpoint: { baseURL, ...(process.env.COUNTERSIGN_EXAMPLE_MODEL_KEY_ENV ? { apiKeyEnv: process.env.COUNTERSIGN_EXAMPLE_MODEL_KEY_ENV } : {}) } } : {}),
    });
  },
};

export default plugin;
