import { nodeInvokeTool } from "../devices/node-invoke-tool";
import { collectCardDetailsTool, getPageContextTool } from "../tools/client-tools";
import { echoTool, execTool } from "../tools/host-tools";
import { askUserTool, confirmUrlTool, requestInputTool, requestSecretTool } from "../tools/question-tools";
import type { TAgentConfig } from "./types";

/** The system prompt of the environment-configured `model` agent. */
export const MODEL_AGENT_SYSTEM_PROMPT = [
  "You are an agent hosted by Countersign. Work in the user's session workspace with the tools you are given.",
  "Some tool calls wait for a person: exec needs their approval, questions (ask_user, request_secret, request_input, confirm_url) wait for their answer, and client tools run in their browser.",
  "A tool result with an `error` tells you why it did not run; do not repeat a denied call. Secrets are stored for you and never shown. Answer in plain text when you are done.",
].join("\n");

type TEnv = Record<string, string | undefined>;

const positiveInt = (env: TEnv, name: string): number | undefined => {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) <= 0) throw new Error(`${name} must be a positive integer (milliseconds or a count), not ${JSON.stringify(raw)}.`);
  return Number(raw);
};

/**
 * The `model` agent, from `COUNTERSIGN_MODEL_BASE_URL` (an OpenAI-compatible API root such as
 * `http://127.0.0.1:8080/v1`), `COUNTERSIGN_MODEL` (the model id) and `COUNTERSIGN_MODEL_API_KEY`
 * (read at each call). It exists only when the base URL is set: otherwise `"agent":"model"` is
 * refused at invocation with a clear 400 and no run is created. Invalid values fail the start.
 */
export function modelAgentFromEnv(env: TEnv): TAgentConfig | null {
  const baseURL = env.COUNTERSIGN_MODEL_BASE_URL?.trim();
  if (!baseURL) return null;
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new Error(`COUNTERSIGN_MODEL_BASE_URL must be an http(s) URL such as http://127.0.0.1:8080/v1, not ${JSON.stringify(baseURL)}.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("COUNTERSIGN_MODEL_BASE_URL must be an http(s) URL.");
  const execPolicy = env.COUNTERSIGN_MODEL_EXEC_APPROVAL?.trim() || "always";
  if (execPolicy !== "always" && execPolicy !== "review") throw new Error("COUNTERSIGN_MODEL_EXEC_APPROVAL must be always or review.");
  const maxRetriesRaw = env.COUNTERSIGN_MODEL_MAX_RETRIES?.trim();
  if (maxRetriesRaw && !/^\d+$/.test(maxRetriesRaw)) throw new Error("COUNTERSIGN_MODEL_MAX_RETRIES must be a whole number.");
  return {
    name: "model",
    harness: "openai-compatible",
    model: env.COUNTERSIGN_MODEL?.trim() || "default",
    description: `A model on the OpenAI-compatible endpoint ${url.origin}, with the host tools, questions, client tools and device commands.`,
    endpoint: {
      baseURL: baseURL.replace(/\/+$/, ""),
      apiKeyEnv: "COUNTERSIGN_MODEL_API_KEY",
      timeoutMs: positiveInt(env, "COUNTERSIGN_MODEL_TIMEOUT_MS"),
      firstTokenTimeoutMs: positiveInt(env, "COUNTERSIGN_MODEL_FIRST_TOKEN_TIMEOUT_MS"),
      maxRetries: maxRetriesRaw ? Number(maxRetriesRaw) : undefined,
    },
    system: env.COUNTERSIGN_MODEL_SYSTEM_PROMPT?.trim() || MODEL_AGENT_SYSTEM_PROMPT,
    tools: [execTool, echoTool, getPageContextTool, collectCardDetailsTool, askUserTool, requestSecretTool, requestInputTool, confirmUrlTool, nodeInvokeTool],
    approval: { exec: execPolicy, echo: "never" },
    approvalTtlMs: 15 * 60_000,
    clientToolTtlMs: 5 * 60_000,
    maxTurns: positiveInt(env, "COUNTERSIGN_MODEL_MAX_TURNS") ?? 32,
    fallbackModel: env.COUNTERSIGN_MODEL_FALLBACK?.trim() || undefined,
  };
}
