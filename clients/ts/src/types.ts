/**
 * The wire types of Countersign's `/v1` API, as the client reads and sends them. They are written
 * out here so the package depends on nothing of the server; `tests/types/client-types.ts` in the
 * Countersign repository checks them against the zod schemas the server validates with.
 */

export type TRisk = "low" | "medium" | "high";
export type TResponseStatus = "in_progress" | "requires_action" | "completed" | "denied" | "cancelled" | "failed";
export type TApprovalStatus = "pending" | "approved" | "denied" | "expired" | "cancelled";
export type TTransport = "http" | "websocket" | "console" | "system" | "link" | "slack";

// ---- responses -------------------------------------------------------------------------------

/** A file for a run: new bytes (base64 `data`) or media the same user attached before (`mediaId`). */
export type TAttachmentInput = { name: string; mediaType: string; data: string } | { mediaId: string; name?: string };

/** `POST /v1/responses` (without `stream`: the client's `stream()` sets it). */
export type TCreateResponseBody = {
  input: string | Record<string, unknown>;
  sessionId?: string;
  agent?: string;
  metadata?: Record<string, unknown>;
  stream?: boolean;
  attachments?: TAttachmentInput[];
};

export type TOutputItem =
  | { type: "message"; role: "assistant"; content: { type: "output_text"; text: string }[] }
  | { type: "thinking"; text: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_result"; callId: string; name: string; output: unknown }
  | { type: "output"; value: unknown }
  | { type: "attachment"; id: string; name: string; mediaType: string; size: number; url: string }
  | { type: "attachment_failure"; path: string; reason: "outside_workspace" | "missing" | "denied" | "too_large" | "cancelled" | "revoked"; message: string };

export type TApprovalAction = {
  type: "human_approval";
  id: string;
  callId: string;
  action: string;
  message: string;
  arguments: unknown;
  risk: TRisk;
  expiresAt: string;
  cwd?: string | null;
  reviewer?: string | null;
  reviewerRationale?: string;
  /** Only for a quorum: how many distinct approvers (never the requester) must approve. */
  requiredApprovals?: number;
};

export type TClientToolAction = {
  type: "client_tool";
  id: string;
  callId: string;
  name: string;
  arguments: unknown;
  expiresAt: string;
  privateInput?: true;
  inputSchema?: unknown;
};

export type TQuestionAction = { type: "question"; id: string; callId: string; questions: unknown[]; expiresAt: string };

export type TRequiredAction = TApprovalAction | TClientToolAction | TQuestionAction;

/** A response's envelope (`POST /v1/responses`, `GET /v1/responses/{id}`, `response.completed`). */
export type TEnvelope = {
  id: string;
  sessionId: string;
  status: TResponseStatus;
  outputText: string;
  output: TOutputItem[];
  metadata: Record<string, unknown>;
  usage: { inputTokens: number; outputTokens: number };
  requiredAction?: TRequiredAction;
  error?: { code: string; message: string };
};

/** `POST /v1/responses`: the envelope at the first boundary. */
export type TCreatedEnvelope = TEnvelope & { questionId?: string };

// ---- questions -------------------------------------------------------------------------------

export type TQuestionStatus = "pending" | "answered" | "cancelled" | "expired";
export type TQuestionKind = "gateway" | "ask_user" | "secret" | "structured" | "url";

export type TFormField = {
  name: string;
  label?: string;
  description?: string;
  type: "string" | "number" | "integer" | "boolean" | "enum";
  required?: boolean;
  default?: string | number | boolean | string[];
  enum?: string[];
  enumTitles?: string[];
  multiple?: boolean;
  minItems?: number;
  maxItems?: number;
  format?: "email" | "uri" | "date" | "date-time";
  secret?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
};

/** One question as asked (`options` may be left out: a free-text answer). */
export type TQuestionInput = {
  questionId: string;
  header: string;
  question: string;
  options?: { label: string; value?: string; description?: string }[];
  multiSelect?: boolean;
  isOther?: boolean;
  isSecret?: boolean;
  url?: string;
  presentation?: "form";
  fields?: TFormField[];
};

/** One question as the server shows it. */
export type TQuestion = TQuestionInput & { options: { label: string; value?: string; description?: string }[] };

/** Answers: question (or `question.field`) id → chosen values. */
export type TAnswers = Record<string, string[]>;

/** A person as the server names them: the display name and the email shown beside it (null: unknown). */
type TPerson = { userId: string; name: string | null; email: string | null };

export type TQuestionRecord = {
  id: string;
  kind: TQuestionKind;
  status: TQuestionStatus;
  questions: TQuestion[];
  answers: TAnswers | null;
  sessionId: string | null;
  responseId: string | null;
  requester: TPerson;
  answeredBy: TPerson | null;
  answeredVia: TTransport | null;
  answeredAt: string | null;
  expiresAt: string;
  expiresAtMs: number;
  createdAt: string;
};

export type TQuestionRequest = { id?: string; questions: TQuestionInput[]; sessionId?: string; responseId?: string; timeoutMs?: number };
export type TQuestionWait = { id: string; timeoutMs?: number; includeResolutionId?: boolean };
export type TQuestionResolve = { id: string; answers: TAnswers; resolvedBy?: string; resolutionId?: string } | { id: string; cancel: true; resolvedBy?: string };
export type TQuestionResult = { status: "pending" } | { status: "answered"; answers: TAnswers; resolutionId?: string } | { status: "cancelled" } | { status: "expired" };

// ---- frames ----------------------------------------------------------------------------------

/** Every stream frame carries these; frames are open objects (a client ignores fields it does not know). */
type TFrameOf<T extends string, S> = { type: T; sequence: number; responseId: string; sessionId: string; requestId?: string; [field: string]: unknown } & S;

/** A frame a response streams (SSE `data:`, `/v1/live`). */
export type TFrame =
  | TFrameOf<"response.created", { metadata: Record<string, unknown> }>
  | TFrameOf<"response.text.delta", { delta: string; itemId?: string; occurrenceId?: string }>
  | TFrameOf<"response.thinking.delta", { delta: string; itemId?: string; occurrenceId?: string }>
  | TFrameOf<"response.tool_call", { id: string; name: string; arguments: unknown }>
  | TFrameOf<"response.tool_result", { callId: string; name: string; output: unknown }>
  | TFrameOf<"response.usage", { outputTokens: number; totalOutputTokens: number }>
  | TFrameOf<"approval.requested", { approval: TApprovalAction }>
  | TFrameOf<"approval.resolved", { approvalId: string; decision: "approve" | "deny"; message?: string; edited?: { originalArguments: unknown; arguments: unknown; bindingHash: string } }>
  | TFrameOf<"client_tool.requested", { clientTool: TClientToolAction }>
  | TFrameOf<"question.requested", { question: TQuestionRecord }>
  | TFrameOf<"question.resolved", { question: TQuestionRecord }>
  | TFrameOf<"question.expired", { question: TQuestionRecord }>
  | TFrameOf<"review.verdict", { callId: string; toolName?: string }>
  | TFrameOf<"steer.queued", { steerId: string; authorityKind: "run" | "source-bound"; chars: number }>
  | TFrameOf<"steer.committed", { steerId: string; turn: number }>
  | TFrameOf<"steer.rejected", { steerId: string; turn?: number; reason: string }>
  | TFrameOf<"steer.cancelled", { steerId: string }>
  | TFrameOf<"error", { error: { code: string; message: string } }>
  | TFrameOf<"response.completed", TEnvelope>;

/** Frames only `/v1/live` sends (besides the stream frames of the responses it follows). */
export type TLiveServerFrame =
  | { type: "session.connected"; sessionId: string }
  | { type: "approval.voted"; responseId: string; sessionId: string; approvalId: string; decision: "approve" | "deny"; status: "pending"; approvals: number; requiredApprovals: number }
  | { type: "error"; code: string; detail: string; error: { code: string; message: string }; responseId?: string; requestId?: string; retryAfter?: number };

export type TLiveFrame = TFrame | TLiveServerFrame;

// ---- approvals -------------------------------------------------------------------------------

/** `POST /v1/approvals`: an approval of an operation the caller runs itself. */
export type TApprovalRequest = {
  /** What the operation is (e.g. `exec`, `send_email`): the agent's policy for it applies. */
  action: string;
  /** The operation's arguments: exactly what the approver reads and may edit. */
  arguments: Record<string, unknown>;
  sessionId?: string;
  /** The agent whose policy applies (default: the installation's default agent). */
  agent?: string;
  /** What the approver reads (default: the tool's own description). */
  message?: string;
  /** Raises the risk (never lowers it below the tool's own assessment). */
  risk?: TRisk;
  expiresInMs?: number;
  /** The same key (per caller) answers the same approval, as it is now: a retry never asks twice. */
  idempotencyKey?: string;
};

/** An external approval as `GET /v1/approvals/{id}` (and the create, and consume) answer it. */
export type TApproval = {
  id: string;
  status: TApprovalStatus;
  /** SHA-256 of the bound operation (the edited one after an edit); pass it to consume. */
  bindingHash: string;
  expiresAtMs: number;
  action: string;
  /** The arguments to run: the approver's edit when there was one. */
  arguments: unknown;
  /** An approver changed the arguments (`originalArguments` holds the requested ones). */
  edited: boolean;
  originalArguments?: unknown;
  /** The approver's reply (a denial with a message), or the exec reviewer's rationale of a denial. */
  message?: string;
  risk: TRisk;
  sessionId: string;
  responseId: string;
  consumed: boolean;
  decidedBy: string | null;
  decidedVia: string | null;
};

/** `POST /v1/approvals/{id}`: approve (as asked, edited, with a grant) or deny (with a reply). */
export type TDecisionBody = {
  decision: "approve" | "deny";
  arguments?: Record<string, unknown>;
  message?: string;
  grant?: "session" | { days: number };
};

/** A decision's answer: a hosted run's next envelope, or a plain denial. */
export type TDecided = (TEnvelope & { approvalId: string; grantId?: string }) | { id: string; status: "denied" };

/** `GET /v1/approvals?status=`: one approval the caller may see (hosted and external). */
export type TApprovalListItem = {
  id: string;
  responseId: string;
  sessionId: string;
  agent: string;
  user: string | null;
  action: string;
  toolName: string;
  message: string;
  arguments: unknown;
  risk: TRisk;
  bindingHash: string;
  status: string;
  expiresAt: string;
  createdAt: string;
  [field: string]: unknown;
};
