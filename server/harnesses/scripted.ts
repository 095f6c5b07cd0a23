import { z } from "zod";
import { ZTtlMs } from "../core/ttl";
import type { TModelTurn } from "../../plugin-sdk/loops";
import type { TModelDriver } from "./model-loop";

const ZToolCall = z.strictObject({
  name: z.string().min(1).max(128),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

export const ZScriptTurn = z.strictObject({
  text: z.string().max(1_000_000).optional(),
  reasoning: z.string().max(1_000_000).optional(),
  planText: z.string().max(100_000).optional(),
  toolCalls: z.array(ZToolCall).max(32).optional(),
  /** Workspace files (relative paths) to attach to the answer. */
  replyAttachments: z.array(z.string().min(1).max(4096)).max(32).optional(),
  usage: z
    .strictObject({ outputTokens: z.number().int().min(0).optional(), inputTokens: z.number().int().min(0).optional() })
    .optional(),
});

/** The object `input` of the `scripted` agent. */
export const ZScriptInput = z.strictObject({
  script: z.array(ZScriptTurn).min(1).max(1000),
  /** Turns the fallback model plays when the script's last turn has no visible text. */
  fallback: z.array(ZScriptTurn).min(1).max(100).optional(),
  /** Execution timeout of each attempt of this response. */
  timeoutMs: z.number().int().min(1000).max(24 * 3_600_000).optional(),
  approvalTtlMs: ZTtlMs.optional(),
  clientToolTtlMs: ZTtlMs.optional(),
});
export type TScriptInput = z.infer<typeof ZScriptInput>;

/** Validates a scripted input; a plain string becomes a one-turn script that acknowledges it. */
export function parseScriptedInput(input: unknown): { ok: true; value: TScriptInput } | { ok: false; message: string } {
  if (typeof input === "string") return { ok: true, value: { script: [{ text: `You said: ${input}` }] } };
  const parsed = ZScriptInput.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, message: `input: ${issue?.path.join(".") || "script"}: ${issue?.message ?? "invalid script"}` };
}

/** The deterministic model: turn N of the script is its Nth response, whatever the conversation. */
export function scriptedDriver(input: unknown): TModelDriver {
  const parsed = parseScriptedInput(input);
  if (!parsed.ok) throw new Error(parsed.message);
  return playTurns(parsed.value.script);
}

/** The fallback model of the scripted agent: plays `fallback` (nothing when absent). */
export function scriptedFallbackDriver(input: unknown): TModelDriver {
  const parsed = parseScriptedInput(input);
  return playTurns(parsed.ok ? (parsed.value.fallback ?? []) : []);
}

function playTurns(script: z.infer<typeof ZScriptTurn>[]): TModelDriver {
  return {
    nextTurn: async (_conversation, turnIndex, _signal, _stream, beforeDispatch): Promise<TModelTurn | null> => {
      // The script is the model: reading its turn is the dispatch, so the guard runs right before it.
      beforeDispatch?.();
      const turn = script[turnIndex];
      if (!turn) return null;
      return {
        text: turn.text,
        reasoning: turn.reasoning,
        planText: turn.planText,
        toolCalls: (turn.toolCalls ?? []).map((c) => ({ name: c.name, arguments: c.arguments ?? {} })),
        usage: turn.usage,
        ...(turn.replyAttachments ? { replyAttachments: turn.replyAttachments } : {}),
      };
    },
  };
}
