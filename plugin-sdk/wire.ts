/**
 * The server's wire types the plugin contract names (the response envelope's output items and
 * status, questions and answers, attachment facts), restated here so the SDK stands alone: a
 * plugin compiles against plugin-sdk/ without the server's sources. Their definitions are the
 * server's (server/core, zod schemas); server/plugins/sdk-contract.test.ts fails the type check
 * when the two drift apart.
 */

export type TResponseStatus = "in_progress" | "requires_action" | "completed" | "denied" | "cancelled" | "failed";

/** The facts of an admitted attachment, recorded on the run (never its bytes). */
export type TAttachmentFact = { id: string; name: string; mediaType: string; size: number; sha256: string };

/** Why a reply attachment was not delivered. */
export type TAttachmentFailureReason = "outside_workspace" | "missing" | "denied" | "too_large" | "cancelled" | "revoked";

/** One item of a response's output (`output[]` of the envelope). */
export type TOutputItem =
  | { type: "message"; role: "assistant"; content: { type: "output_text"; text: string }[] }
  | { type: "thinking"; text: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_result"; callId: string; name: string; output: unknown }
  | { type: "output"; value: unknown }
  /** A file the agent attached to its answer. */
  | { type: "attachment"; id: string; name: string; mediaType: string; size: number; url: string }
  /** A file the agent asked to attach that was not delivered, and why. */
  | { type: "attachment_failure"; path: string; reason: TAttachmentFailureReason; message: string };

/** One field of a form question (`presentation: "form"`). */
export type TFormField = {
  name: string;
  label?: string;
  description?: string;
  type: "string" | "number" | "integer" | "boolean" | "enum";
  required?: boolean;
  default?: string | number | boolean | string[];
  enum?: string[];
  /** What a person sees for each `enum` value (same order); the value itself is what is answered. */
  enumTitles?: string[];
  /** An enum field that takes several of its values (a multi-select), between `minItems` and `maxItems`. */
  multiple?: boolean;
  minItems?: number;
  maxItems?: number;
  /** A string field's format, checked when answered. */
  format?: "email" | "uri" | "date" | "date-time";
  secret?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
};

/** A question as a person sees it (docs/api.md, "Questions"): choices, free text, a secret, a URL to confirm or a form. */
export type TQuestion = {
  questionId: string;
  header: string;
  question: string;
  options: { label: string; value?: string; description?: string }[];
  multiSelect?: boolean;
  isOther?: boolean;
  isSecret?: boolean;
  url?: string;
  presentation?: "form";
  fields?: TFormField[];
};

/** Answers: a flat map of question (or `question.field`) id to values. */
export type TAnswers = Record<string, string[]>;
