import { createHash } from "node:crypto";
import { z } from "zod";

export const QUESTION_STATUSES = ["pending", "answered", "cancelled", "expired"] as const;
export type TQuestionStatus = (typeof QUESTION_STATUSES)[number];

export const QUESTION_KINDS = ["gateway", "ask_user", "secret", "structured", "url"] as const;
export type TQuestionKind = (typeof QUESTION_KINDS)[number];

/** Gateway error reasons (`error.details.reason`). */
export const QUESTION_ERROR_REASONS = [
  "QUESTION_NOT_FOUND",
  "QUESTION_ALREADY_TERMINAL",
  "QUESTION_ID_IN_USE",
  "QUESTION_INVALID_ANSWER",
  "QUESTION_REQUESTER_INACTIVE",
  "INVALID_PARAMS",
  "UNAVAILABLE",
] as const;
export type TQuestionErrorReason = (typeof QUESTION_ERROR_REASONS)[number];

/** The contract sets the pattern and no length (the body's 1 MiB bounds it). */
export const ZQuestionId = z.string().regex(/^[a-z][a-z0-9_]*$/, "must match ^[a-z][a-z0-9_]*$");

/** An absolute http(s) URL without credentials, kept exactly as given. */
export const ZLiteralUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "" && !/\s/.test(value);
    } catch {
      return false;
    }
  }, "url must be an absolute http(s) URL without credentials");

export const FIELD_TYPES = ["string", "number", "integer", "boolean", "enum"] as const;
/** The string formats a form checks (those MCP elicitation defines). */
export const FIELD_FORMATS = ["email", "uri", "date", "date-time"] as const;

export const ZFormField = z.strictObject({
  name: ZQuestionId,
  label: z.string().min(1).max(120).optional(),
  description: z.string().max(500).optional(),
  type: z.enum(FIELD_TYPES),
  required: z.boolean().optional(),
  default: z.union([z.string().max(2000), z.number(), z.boolean(), z.array(z.string().max(200)).max(50)]).optional(),
  enum: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
  /** What a person sees for each `enum` value (same order); the value itself is what is answered. */
  enumTitles: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
  /** An enum field that takes several of its values (a multi-select), between `minItems` and `maxItems`. */
  multiple: z.boolean().optional(),
  minItems: z.number().int().min(0).max(50).optional(),
  maxItems: z.number().int().min(1).max(50).optional(),
  /** A string field's format, checked when answered. */
  format: z.enum(FIELD_FORMATS).optional(),
  secret: z.boolean().optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  minLength: z.number().int().min(0).max(10_000).optional(),
  maxLength: z.number().int().min(1).max(10_000).optional(),
});
export type TFormField = z.infer<typeof ZFormField>;

export const ZOption = z.strictObject({
  label: z.string().min(1).max(64),
  value: z.string().min(1).optional(),
  description: z.string().max(500).optional(),
});

export const ZQuestion = z
  .strictObject({
    questionId: ZQuestionId,
    header: z.string().min(1).max(12),
    question: z.string().min(1).max(4000),
    options: z.array(ZOption).max(4).default([]),
    multiSelect: z.boolean().optional(),
    isOther: z.boolean().optional(),
    isSecret: z.boolean().optional(),
    url: ZLiteralUrl.optional(),
    presentation: z.literal("form").optional(),
    fields: z.array(ZFormField).min(1).max(20).optional(),
  })
  .superRefine((q, ctx) => {
    if (q.options.length === 1) ctx.addIssue({ code: "custom", path: ["options"], message: "options must be empty or hold 2 to 4 choices" });
    const values = q.options.map((o) => o.value ?? o.label);
    if (new Set(values).size !== values.length) ctx.addIssue({ code: "custom", path: ["options"], message: "option values must be unique" });
    if ((q.presentation === "form") !== Boolean(q.fields)) ctx.addIssue({ code: "custom", path: ["fields"], message: 'fields go with presentation "form", and a form needs fields' });
    if (q.fields && (q.options.length > 0 || q.url)) ctx.addIssue({ code: "custom", path: ["fields"], message: "a form question has no options or url" });
    if (q.url && q.options.length > 0) ctx.addIssue({ code: "custom", path: ["url"], message: "a URL confirmation has no options; its answers are confirm or decline" });
    for (const field of q.fields ?? []) {
      if (field.type === "enum" && !field.enum) ctx.addIssue({ code: "custom", path: ["fields"], message: `field ${field.name}: enum fields need enum values` });
      if (field.enumTitles && field.enumTitles.length !== field.enum?.length) ctx.addIssue({ code: "custom", path: ["fields"], message: `field ${field.name}: enumTitles needs one title per enum value` });
      if ((field.multiple || field.minItems !== undefined || field.maxItems !== undefined) && field.type !== "enum") ctx.addIssue({ code: "custom", path: ["fields"], message: `field ${field.name}: only enum fields take several values` });
      if (field.format && field.type !== "string") ctx.addIssue({ code: "custom", path: ["fields"], message: `field ${field.name}: only string fields have a format` });
      if (Array.isArray(field.default) !== Boolean(field.multiple) && field.default !== undefined) ctx.addIssue({ code: "custom", path: ["fields"], message: `field ${field.name}: a multi-select's default is a list, any other default is not` });
    }
  });
export type TQuestion = z.infer<typeof ZQuestion>;

export const ZQuestions = z
  .array(ZQuestion)
  .min(1, "ask 1 to 3 questions")
  .max(3, "ask 1 to 3 questions")
  .superRefine((qs, ctx) => {
    const ids = qs.map((q) => q.questionId);
    if (new Set(ids).size !== ids.length) ctx.addIssue({ code: "custom", message: "questionId values must be unique" });
  });

/** Answers in both directions: a flat map of question (or `question.field`) id to values. */
/** Keys and values are as long as the body allows; no question takes more than 50 values (4 options, 50 enum values). */
export const ZAnswers = z.record(z.string().min(1), z.array(z.string()).max(50));
export type TAnswers = z.infer<typeof ZAnswers>;

export const ZResolutionId = z.string().min(1).max(128);

export const URL_CONFIRM = "confirm";
export const URL_DECLINE = "decline";
export const STORED = "stored";

/** The deterministic id of a tool-created question: a retried tool call finds the same question. */
export const deriveQuestionId = (scope: string, callId: string): string =>
  `ask_${createHash("sha256").update(`${scope}\u0000${callId}`).digest("hex").slice(0, 32)}`;

/** The answer keys a question expects: its id, or `id.field` for each form field. */
export const answerKeysOf = (q: TQuestion): string[] => (q.fields ? q.fields.map((f) => `${q.questionId}.${f.name}`) : [q.questionId]);

/** Is this answer key secret (masked, stored in the secret store, shown as "stored")? */
export const isSecretKey = (q: TQuestion, key: string): boolean =>
  Boolean(q.isSecret) || Boolean(q.fields?.find((f) => `${q.questionId}.${f.name}` === key)?.secret);
