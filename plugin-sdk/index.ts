/**
 * The Countersign plugin SDK (plugin API 1.x): what a harness plugin may import. A plugin is a
 * folder (or package) with a `countersign.plugin.json` manifest and a module whose default export
 * is a {@link TCountersignPlugin}; the host loads it only when it is named and enabled in the
 * plugins configuration (see docs/plugins.md). Everything here is types and constants: a plugin
 * never reaches into the host's modules, it receives what it may use through `register(api)` and
 * through each attempt's `hostCapabilities`.
 *
 * The SDK is the contract, so it stands alone: nothing in plugin-sdk/ imports the server (checked
 * by .dependency-cruiser.cjs); the server implements these types and imports them from here.
 * The server's own types it names are restated in ./wire.ts and ./runtime.ts and checked equal to
 * the server's by server/plugins/sdk-contract.test.ts.
 */
import type { TConversationEntry, TModelTurn, TBeforeDispatch, TTurnStream, TNativeAttemptParams, TNativeEndpoint, TNativeResult, TModelEndpoint } from "./loops";
import type { THostCapabilities } from "./capabilities";
import type { TToolResultMiddleware, TToolResultMiddlewareOptions } from "./runtime";
import type { TPluginManifest } from "./manifest";
import type {
  TFinalizeToolAvailability,
  TNativeRefusalReason,
  TNativeToolDecision,
  TNativeToolRequest,
  TPreparedToolSurface,
  TSurfaceTool,
  TToolSurfaceCapabilities,
} from "./tool-surface";
import type { TSideQuestionAnswer, TSideQuestionCapabilities, TSideQuestionParams, TSideQuestionTranscript } from "./side-questions";

export type { TConversationEntry, TModelTurn, TBeforeDispatch, TTurnStream, THostCapabilities, TToolResultMiddleware, TToolResultMiddlewareOptions, TPluginManifest };
// Plugin API 1.1: native-loop harnesses and their tool-surface capabilities.
export type {
  TNativeAttemptParams,
  TNativeEndpoint,
  TNativeResult,
  TFinalizeToolAvailability,
  TNativeRefusalReason,
  TNativeToolDecision,
  TNativeToolRequest,
  TPreparedToolSurface,
  TSurfaceTool,
  TToolSurfaceCapabilities,
  TModelEndpoint,
};

// Plugin API 1.2: side questions.
export type { TSideQuestionAnswer, TSideQuestionCapabilities, TSideQuestionParams, TSideQuestionTranscript };
/** The side-question parameters under the name the harness contracts use. */
export type AgentHarnessSideQuestionParamsV2 = TSideQuestionParams;

/** The plugin API this SDK describes; a manifest's `pluginApi` range must include the host's. */
export const PLUGIN_API_VERSION = "1.2.0";

/** The runtime id of this host: a manifest's `runtimes` must name it, and middleware targets it. */
export const HOST_RUNTIME = "countersign";

/**
 * What one attempt of a plugin harness receives. `hostCapabilities` is bound to the admitted run
 * and fails closed once the attempt settles: keep no reference to it past the attempt.
 */
export type THarnessAttemptParams = {
  /** The run's input as the caller sent it (validated by the harness's `parseInput`). */
  input: unknown;
  agent: { name: string; model: string };
  hostCapabilities: THostCapabilities;
  /** Aborted when the attempt is cancelled (a person, its deadline, a shutdown). */
  signal: AbortSignal;
};

/**
 * The agent loop's model side, one completed response per call; the host runs the tool calls it
 * returns (policy, approvals, questions, client tools, confinement), records every step and
 * resumes the loop after a person decided. `null`: nothing more to say. Call `beforeDispatch`
 * synchronously right before each request (first and every retry); it throws when the request
 * may no longer go (cancelled, or a steering message in it was revoked).
 */
export type THarnessDriver = {
  nextTurn: (conversation: readonly TConversationEntry[], turnIndex: number, signal: AbortSignal, stream?: TTurnStream, beforeDispatch?: TBeforeDispatch) => Promise<TModelTurn | null>;
};

/** A harness a plugin contributes; agents name it by `id`. */
export type TPluginHarness = {
  /** Canonical id (lowercase letters, digits, `-`, `_`, `.`), unique across the host. */
  id: string;
  /** Checks a run's input before the run is created; a refusal is a 400 naming `message`. Default: any non-empty input. */
  parseInput?: (input: unknown) => { ok: true } | { ok: false; message: string };
  /**
   * Builds the driver of one attempt. Called again for each attempt (a resume replays recorded turns without calling it).
   * A harness gives exactly one of `createDriver` (the host runs the tools) and `run` (plugin API 1.1).
   */
  createDriver?: (params: THarnessAttemptParams) => THarnessDriver;
  /**
   * A native loop (plugin API 1.1): the plugin runs its own model and its own tools, asking the
   * host before each tool call (`hostCapabilities.runBeforeToolCall`). After a suspension the
   * attempt calls `run` again from the start; an identical call then gets the recorded decision.
   */
  run?: (params: TNativeAttemptParams) => Promise<TNativeResult>;
  /**
   * `false`: steering messages and question answers to this harness's runs are accepted only from
   * the run owner's profile (another person's is refused with a 403). Omitted: allowed (API 1.1).
   */
  supportsCrossProfileSteering?: boolean;
  /**
   * Plugin API 1.2: answers a person's side question about one of this harness's runs (`POST
   * /v1/responses/{id}/side_questions`, tRPC `responses.askSideQuestion`) without steering the
   * run or changing its transcript. `params.transcript` is a frozen copy of the run so far;
   * `params.hostCapabilities` is bound to this side question and fails closed once it settled.
   * Omitted: side questions to this harness's runs are refused (409).
   */
  sideQuestion?: (params: TSideQuestionParams) => Promise<TSideQuestionAnswer>;
};

/** An agent a plugin contributes, served like a built-in one (`"agent": name` on `/v1/responses`). */
export type TPluginAgent = {
  name: string;
  /** A harness id: the plugin's own or a built-in one. */
  harness: string;
  model?: string;
  description: string;
  /** The host's tools by name (`exec`, `echo`, `ask_user`, `request_input`, `request_secret`, `confirm_url`, `get_page_context`, `collect_card_details`, `node_invoke`). */
  tools: string[];
  /**
   * The exact node commands the agent's harness needs on a paired device (with the `node_invoke`
   * tool). Copied when the agent registers and snapshotted into each attempt's host capabilities:
   * in a Full access session only these run without a person's approval; any other command takes
   * the ordinary approval path. It narrows authority, never grants it: pairing, the device's
   * allowlist, consent and local policy still apply, and changing the array later changes nothing.
   */
  requiredNodeCommands?: string[];
  /** Tool name → who decides; tools not listed never need approval. */
  approval?: Record<string, "always" | "review" | "never">;
  maxTurns?: number;
  approvalTtlMs?: number;
  clientToolTtlMs?: number;
  /** Plugin API 1.1: the tools a native-loop harness runs itself; `approval` may name them (action `native:<name>`). */
  nativeTools?: string[];
  /** Plugin API 1.1: the agent's OpenAI-compatible endpoint (a native loop receives it with the key read from `apiKeyEnv`). */
  endpoint?: TModelEndpoint;
  /** Plugin API 1.1: the agent's system prompt, handed to a native loop. */
  system?: string;
};

/** What `register` receives. Every method throws a sentence naming the plugin when a registration is refused. */
export type TPluginApi = {
  readonly apiVersion: string;
  readonly manifest: Readonly<TPluginManifest>;
  registerHarness: (harness: TPluginHarness) => void;
  registerAgent: (agent: TPluginAgent) => void;
  /**
   * Tool-result middleware, run before a harness feeds a tool's result back to the model. The
   * manifest must declare the targeted runtimes in `contracts.agentToolResultMiddleware`;
   * omitted `runtimes` = every declared one, `[]` or an undeclared runtime is refused.
   */
  registerAgentToolResultMiddleware: (handler: TToolResultMiddleware, options?: TToolResultMiddlewareOptions) => void;
  log: { info: (message: string, data?: Record<string, unknown>) => void; warn: (message: string, data?: Record<string, unknown>) => void };
};

/** A plugin module's default export. */
export type TCountersignPlugin = { register: (api: TPluginApi) => void | Promise<void> };

/** The authority capabilities of `hostCapabilities` (plugin API 1.1; see docs/plugins.md). */
export type {
  THostAuthorityCapabilities,
  TQuestionDispatcher,
  TQuestionAuthority,
  TQuestionAskOutcome,
  TQuestionSubmitOutcome,
  TRetainedSourceAuthority,
  TSubagentCapabilities,
  TSubagentSpawnRequest,
  TSubagentSpawnOutcome,
  TCompactParams,
  TCompactResult,
  TAsyncWorkContext,
  TAsyncWorkResource,
  TExecReviewRequest,
  TExecAutoReviewDecision,
} from "./authority";
/** The seed's name for the decision `hostCapabilities.reviewExec` returns. */
export type ExecAutoReviewDecision = import("./authority").TExecAutoReviewDecision;
