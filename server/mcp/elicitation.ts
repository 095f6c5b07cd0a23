import { ErrorCode, type ElicitRequest, type ElicitResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_QUESTION_TIMEOUT_MS } from "../core/ttl";
import { type TQuestion, URL_CONFIRM, ZLiteralUrl, ZQuestion } from "../core/questions/schema";
import { compileSchema, typedValues } from "../core/questions/structured";
import type { TAskDuringTool, TSecretAnswer } from "../ports/held-question";

/** The question an elicitation becomes, and how to read its answers back into MCP content. */
export type TElicitQuestion =
  | { ok: true; mode: "form"; question: TQuestion; keys: string[] }
  | { ok: true; mode: "url"; question: TQuestion; url: string }
  | { ok: false; reason: string };

const FORM_ID = "form";
const URL_ID = "confirm_url";

/** A header of at most 12 characters naming the server. */
const headerOf = (server: string): string => (server.length <= 12 ? server : `${server.slice(0, 11)}…`);

/**
 * Compiles an MCP elicitation into a Countersign question: form mode (a schema of primitive
 * fields) becomes a form, URL mode a literal URL confirmation. Anything the answer page cannot
 * show faithfully is refused before anything is asked.
 */
export function elicitationQuestion(server: string, params: ElicitRequest["params"]): TElicitQuestion {
  const message = (params.message || "The tool needs your input.").slice(0, 4000);
  if (params.mode === "url") {
    const url = ZLiteralUrl.safeParse(params.url);
    if (!url.success) return { ok: false, reason: url.error.issues[0]?.message ?? "the URL cannot be shown" };
    const question = ZQuestion.safeParse({ questionId: URL_ID, header: headerOf(server), question: message, url: url.data });
    if (!question.success) return { ok: false, reason: question.error.issues[0]?.message ?? "the URL cannot be shown" };
    return { ok: true, mode: "url", question: question.data, url: url.data };
  }
  const schema = params.requestedSchema;
  const compiled = compileSchema(schema);
  if (!compiled.ok) return { ok: false, reason: compiled.reason };
  // compileSchema keeps the properties' order (one field per property, or it fails): zip them.
  const keys = Object.keys(schema.properties);
  if (keys.length !== compiled.fields.length) return { ok: false, reason: "The schema's fields cannot be mapped to a form." };
  const question = ZQuestion.safeParse({ questionId: FORM_ID, header: headerOf(server), question: message, presentation: "form", fields: compiled.fields });
  if (!question.success) {
    const issue = question.error.issues[0];
    return { ok: false, reason: `The form cannot show this schema (${issue?.path.join(".") || "schema"}: ${issue?.message ?? "invalid"}).` };
  }
  return { ok: true, mode: "form", question: question.data, keys };
}

/** The tool call an elicitation arrives during, with the host's held-question protocol bound to it. */
export type TElicitCall = {
  server: string;
  callId: string;
  /** Aborted when the run is cancelled or times out, or the call ends. */
  signal: AbortSignal;
  /** Asks a person while the call stays in flight (the run shows `requires_action`). */
  ask: TAskDuringTool;
  /** Reads a secret answer of a question this call asked, for the MCP server only. */
  secretAnswer: TSecretAnswer;
  /** When the whole tool call times out (epoch ms); the question expires a little before. */
  deadline: number;
  /** Records a host event in the run's trajectory. */
  record: (type: string, data: Record<string, unknown>) => Promise<void>;
};

/**
 * Answers an elicitation request of an MCP server during a tool call: asks a person through a
 * question linked to the run and maps how it settled to the MCP result — answered → `accept`
 * (form: typed values under the server's own field names; URL: `confirm` → accept, `decline` →
 * decline), declined by the person → `decline`, expired or abandoned → `cancel`.
 */
export async function answerElicitation(call: TElicitCall, params: ElicitRequest["params"], signal: AbortSignal): Promise<ElicitResult> {
  const compiled = elicitationQuestion(call.server, params);
  const mode = params.mode === "url" ? "url" : "form";
  if (!compiled.ok) {
    await call.record("mcp.elicitation", { callId: call.callId, server: call.server, mode, action: "refused", reason: compiled.reason });
    throw new McpError(ErrorCode.InvalidParams, `Countersign cannot show this elicitation to a person: ${compiled.reason}`);
  }
  const timeoutMs = Math.min(DEFAULT_QUESTION_TIMEOUT_MS, call.deadline - Date.now() - 2000);
  if (timeoutMs < 1000) {
    await call.record("mcp.elicitation", { callId: call.callId, server: call.server, mode, action: "cancel", reason: "no time left in the call" });
    return { action: "cancel" };
  }
  const outcome = await call.ask([compiled.question], { signal: AbortSignal.any([call.signal, signal]), timeoutMs });
  let result: ElicitResult;
  if (outcome.status === "answered") {
    if (compiled.mode === "url") result = { action: outcome.answers[URL_ID]?.[0] === URL_CONFIRM ? "accept" : "decline" };
    else {
      const typed = typedValues(compiled.question, outcome.answers);
      const content: Record<string, string | number | boolean> = {};
      for (const [index, field] of (compiled.question.fields ?? []).entries()) {
        const key = compiled.keys[index];
        if (key === undefined || !(field.name in typed)) continue;
        // A secret field's value goes to the MCP server only; records and frames keep "stored".
        const value = field.secret ? await call.secretAnswer(outcome.questionId, `${FORM_ID}.${field.name}`) : typed[field.name];
        if (value !== null && value !== undefined) content[key] = value as string | number | boolean;
      }
      result = { action: "accept", content };
    }
  } else result = { action: outcome.status === "declined" ? "decline" : "cancel" };
  await call.record("mcp.elicitation", { callId: call.callId, server: call.server, mode, questionId: outcome.questionId, settled: outcome.status, action: result.action });
  return result;
}
