import { z } from "zod";
import { compileSchema, typedValues } from "../core/questions/structured";
import { type TQuestion, URL_CONFIRM, ZLiteralUrl, ZQuestion, ZQuestionId } from "../core/questions/schema";
import type { TQuestionTool, TSettledQuestion } from "./types";

/**
 * `timeoutSeconds` is clamped to 1–3600 (default 600), the range the MCP face's tools take: at
 * least the contract's smallest wait (1 s), at most an hour, so a question never holds its run
 * and its session (one pending question each) longer than that; a later answer is a new question.
 */
const timeoutMsOf = (seconds: number | undefined): number => Math.min(3600, Math.max(1, Math.trunc(seconds ?? 600))) * 1000;

const ZAskArgs = z.strictObject({
  questions: z
    .array(
      z.strictObject({
        id: ZQuestionId,
        header: z.string().min(1).max(12),
        question: z.string().min(1).max(4000),
        options: z.array(z.strictObject({ label: z.string().min(1).max(64), description: z.string().max(500).optional() })).max(4).default([]),
        multiSelect: z.boolean().optional(),
      }),
    )
    .min(1)
    .max(3),
  timeoutSeconds: z.number().optional(),
});

const settledText = (settled: TSettledQuestion) =>
  settled.status === "expired" ? { status: "expired", message: settled.message } : settled.status === "cancelled" ? { status: "cancelled", message: `The question was cancelled${settled.by ? ` by ${settled.by}` : ""}.` } : null;

/** `ask_user`: 1–3 questions with 0 or 2–4 options; free text is always allowed. */
export const askUserTool: TQuestionTool = {
  kind: "question",
  name: "ask_user",
  description: "Ask the user 1–3 questions and wait for the answers.",
  argsSchema: ZAskArgs,
  questionKind: "ask_user",
  compile: (raw) => {
    const args = raw as z.infer<typeof ZAskArgs>;
    const questions: TQuestion[] = [];
    for (const q of args.questions) {
      const parsed = ZQuestion.safeParse({ questionId: q.id, header: q.header, question: q.question, options: q.options, multiSelect: q.multiSelect, isOther: true });
      if (!parsed.success) return { ok: false, result: { error: `Question ${q.id}: ${parsed.error.issues[0]?.message ?? "invalid"}.` } };
      questions.push(parsed.data);
    }
    if (new Set(questions.map((q) => q.questionId)).size !== questions.length) return { ok: false, result: { error: "Question ids must be unique." } };
    return { ok: true, questions, timeoutMs: timeoutMsOf(args.timeoutSeconds) };
  },
  present: (_args, _questions, settled) => settledText(settled) ?? { status: "answered", answers: settled.status === "answered" ? settled.answers : {} },
};

const ZSecretArgs = z.strictObject({
  name: ZQuestionId,
  prompt: z.string().min(1).max(2000),
  header: z.string().min(1).max(12).optional(),
  timeoutSeconds: z.number().optional(),
});

/** A secret request: masked input; the value goes to the secret store, the agent sees "stored". */
export const requestSecretTool: TQuestionTool = {
  kind: "question",
  name: "request_secret",
  description: "Ask the user for a secret (token, password); the value is stored, never shown to you.",
  argsSchema: ZSecretArgs,
  questionKind: "secret",
  compile: (raw) => {
    const args = raw as z.infer<typeof ZSecretArgs>;
    return { ok: true, questions: [ZQuestion.parse({ questionId: args.name, header: args.header ?? "Secret", question: args.prompt, isSecret: true })], timeoutMs: timeoutMsOf(args.timeoutSeconds) };
  },
  present: (args, _q, settled) =>
    settledText(settled) ?? {
      status: "answered",
      stored: true,
      secretId: settled.status === "answered" ? settled.secretIds?.[(args as z.infer<typeof ZSecretArgs>).name] : undefined,
    },
};

const ZStructuredArgs = z.strictObject({
  schema: z.unknown(),
  title: z.string().min(1).max(12).optional(),
  message: z.string().min(1).max(2000).optional(),
  timeoutSeconds: z.number().optional(),
});

/** Structured input: a JSON schema of primitive fields becomes a form; outcome answered | declined | cancelled | unsupported. */
export const requestInputTool: TQuestionTool = {
  kind: "question",
  name: "request_input",
  description: "Ask the user to fill a form described by a JSON schema of primitive fields.",
  argsSchema: ZStructuredArgs,
  questionKind: "structured",
  compile: (raw) => {
    const args = raw as z.infer<typeof ZStructuredArgs>;
    const compiled = compileSchema(args.schema);
    if (!compiled.ok) return { ok: false, result: { outcome: "unsupported", reason: compiled.reason } };
    // A field the form's limits cannot hold (a long default, a large enum, ...) is unsupported too:
    // decided here, before anything is shown, never a failed run.
    const question = ZQuestion.safeParse({ questionId: "form", header: args.title ?? "Form", question: args.message ?? "Please fill in these fields.", presentation: "form", fields: compiled.fields });
    if (!question.success) {
      const issue = question.error.issues[0];
      return { ok: false, result: { outcome: "unsupported", reason: `The form cannot show this schema (${issue?.path.join(".") || "schema"}: ${issue?.message ?? "invalid"}).` } };
    }
    return { ok: true, questions: [question.data], timeoutMs: timeoutMsOf(args.timeoutSeconds) };
  },
  present: (_args, questions, settled) => {
    if (settled.status === "answered" && questions[0]) return { outcome: "answered", values: typedValues(questions[0], settled.answers) };
    if (settled.status === "cancelled" && !settled.system) return { outcome: "declined" };
    return { outcome: "cancelled", reason: settled.status === "expired" ? settled.message : "The request was cancelled." };
  },
};

const ZUrlArgs = z.strictObject({ url: z.string().max(2048), reason: z.string().min(1).max(2000).optional(), timeoutSeconds: z.number().optional() });

/** Literal URL confirmation: shown exactly as given; confirmed or declined. */
export const confirmUrlTool: TQuestionTool = {
  kind: "question",
  name: "confirm_url",
  description: "Ask the user to confirm opening an exact URL.",
  argsSchema: ZUrlArgs,
  questionKind: "url",
  compile: (raw) => {
    const args = raw as z.infer<typeof ZUrlArgs>;
    const url = ZLiteralUrl.safeParse(args.url);
    if (!url.success) return { ok: false, result: { error: url.error.issues[0]?.message ?? "invalid url" } };
    const question = ZQuestion.parse({ questionId: "confirm_url", header: "Open link", question: args.reason ?? "Do you want to open this link?", url: url.data });
    return { ok: true, questions: [question], timeoutMs: timeoutMsOf(args.timeoutSeconds) };
  },
  present: (args, _q, settled) => {
    const url = (args as z.infer<typeof ZUrlArgs>).url;
    if (settled.status === "answered") return { outcome: settled.answers.confirm_url?.[0] === URL_CONFIRM ? "confirmed" : "declined", url };
    return { outcome: settled.status === "cancelled" && !settled.system ? "declined" : "cancelled", url };
  },
};
