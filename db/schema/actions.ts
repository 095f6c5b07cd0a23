import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { APPROVAL_STATUSES, AUTO_OUTCOMES, CLIENT_TOOL_STATUSES, RISKS } from "../../server/core/vocabulary";
import { responses, transportEnum } from "./responses";

export const approvalStatusEnum = pgEnum("approval_status", APPROVAL_STATUSES);
export const clientToolStatusEnum = pgEnum("client_tool_status", CLIENT_TOOL_STATUSES);
export const riskEnum = pgEnum("risk", RISKS);
export const settledByEnum = pgEnum("settled_by", AUTO_OUTCOMES);

/**
 * How a decided approval ended (docs/analytics.md), computed by the database from its row (enum casts
 * are not immutable, so each value is spelled out): null while pending; what settled it without a person; an approval after an edit; a denial with a reply.
 */
const OUTCOME_SQL = sql`CASE
  WHEN status = 'pending' THEN NULL
  WHEN settled_by = 'policy' THEN 'policy'
  WHEN settled_by = 'grant' THEN 'grant'
  WHEN settled_by = 'reviewer' THEN 'reviewer'
  WHEN status = 'approved' AND original_arguments IS NOT NULL THEN 'edited'
  WHEN status = 'approved' THEN 'approved'
  WHEN status = 'denied' AND reply_message IS NOT NULL THEN 'replied'
  WHEN status = 'denied' THEN 'denied'
  WHEN status = 'expired' THEN 'expired'
  ELSE 'cancelled' END`;

/** A suspended protected operation waiting for a person; bound to the exact operation by `bindingHash`. */
export const approvals = pgTable(
  "approvals",
  {
    id: text("id").primaryKey(),
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id),
    sessionId: text("session_id").notNull(),
    userId: text("user_id").notNull(),
    /** The agent whose policy asked (the run's agent; an external approval's named or default one). */
    agent: text("agent").notNull(),
    callId: text("call_id").notNull(),
    toolName: text("tool_name").notNull(),
    action: text("action").notNull(),
    arguments: jsonb("arguments").$type<unknown>().notNull(),
    cwd: text("cwd"),
    bindingHash: text("binding_hash").notNull(),
    risk: riskEnum("risk").notNull(),
    message: text("message").notNull(),
    /** The exec reviewer that routed this to a person, and why (policy `review`). */
    reviewer: text("reviewer"),
    reviewerRationale: text("reviewer_rationale"),
    status: approvalStatusEnum("status").notNull().default("pending"),
    /** Edit before approve: the arguments and binding as the agent asked, when an approver changed them. */
    originalArguments: jsonb("original_arguments").$type<unknown>(),
    originalBindingHash: text("original_binding_hash"),
    /** Reply instead: a denial whose message the agent receives as the tool's result (the run goes on). */
    replyMessage: text("reply_message"),
    /** The standing grant this approval created (decision with `grant`). */
    grantId: text("grant_id"),
    /** Distinct approvers needed (quorum for high risk; the requester never counts). 1 = one decision settles it. */
    requiredApprovals: integer("required_approvals").notNull().default(1),
    decidedBy: text("decided_by"),
    decidedVia: transportEnum("decided_via"),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** Requested over `POST /v1/approvals` by an agent that runs the operation itself (no hosted run resumes). */
    external: boolean("external").notNull().default(false),
    /** The caller's idempotency key (external approvals): one approval per requester and key. */
    idempotencyKey: text("idempotency_key"),
    /** When the external caller consumed the approval before running the operation (once). */
    consumedAt: timestamp("consumed_at", { withTimezone: true }),
    /** An external approval settled when it was asked, without a person: by the policy, a standing grant or the exec reviewer. */
    settledBy: settledByEnum("settled_by"),
    /** How it ended (`DECISION_OUTCOMES`), null while pending: computed by the database. */
    outcome: text("outcome").generatedAlwaysAs(OUTCOME_SQL),
    /** What the agent's shadow policy would have decided (`always`, `review`, `never`) where it differs from the live one (docs/analytics.md#shadow-rules). */
    shadow: text("shadow", { enum: ["always", "review", "never"] }),
    /** The same request: its action and arguments as asked (before an edit), as jsonb's canonical text (docs/analytics.md). */
    requestKey: text("request_key").generatedAlwaysAs(sql`md5(action || ' ' || coalesce(original_arguments, arguments)::text)`),
  },
  (t) => [
    uniqueIndex("approvals_call_uq").on(t.responseId, t.callId),
    uniqueIndex("approvals_idempotency_uq").on(t.userId, t.idempotencyKey),
    index("approvals_pending_idx").on(t.expiresAt).where(sql`status = 'pending'`),
    // Approvals inbox: the pending list (oldest first) and the decided history (newest first, keyset on created_at, id).
    index("approvals_pending_created_idx").on(t.createdAt, t.id).where(sql`status = 'pending'`),
    index("approvals_decided_created_idx").on(t.createdAt, t.id).where(sql`status <> 'pending'`),
    // Decision analytics: a period's decided approvals and the columns every figure groups by, read from the index alone.
    index("approvals_outcome_created_idx")
      .on(t.createdAt, t.outcome, t.agent, t.action, t.userId, t.decidedBy, t.decidedAt, t.requestKey, t.id)
      .where(sql`outcome is not null`),
    index("approvals_shadow_created_idx").on(t.createdAt, t.shadow, t.outcome, t.agent, t.action, t.userId, t.decidedBy).where(sql`shadow is not null`),
  ],
);

/**
 * A hosted tool call the gate let through or refused without asking anyone (no approval row):
 * the agent's policy (`never`, a predicate), a standing grant, or the exec reviewer. With the
 * approvals, every gated request once (docs/analytics.md).
 */
export const gatePasses = pgTable(
  "gate_passes",
  {
    id: text("id").primaryKey(),
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id),
    sessionId: text("session_id").notNull(),
    userId: text("user_id").notNull(),
    agent: text("agent").notNull(),
    callId: text("call_id").notNull(),
    toolName: text("tool_name").notNull(),
    action: text("action").notNull(),
    arguments: jsonb("arguments").$type<unknown>().notNull(),
    cwd: text("cwd"),
    risk: riskEnum("risk").notNull(),
    settledBy: settledByEnum("settled_by").notNull(),
    /** The reviewer may deny; the policy and a grant only let the call through. */
    decision: text("decision", { enum: ["approve", "deny"] }).notNull(),
    /** What the agent's shadow policy would have decided where it differs from the live one. */
    shadow: text("shadow", { enum: ["always", "review", "never"] }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    requestKey: text("request_key").generatedAlwaysAs(sql`md5(action || ' ' || arguments::text)`),
  },
  (t) => [
    uniqueIndex("gate_passes_call_uq").on(t.responseId, t.callId),
    index("gate_passes_created_idx").on(t.createdAt, t.settledBy, t.agent, t.action, t.userId, t.requestKey, t.id),
    index("gate_passes_shadow_created_idx").on(t.createdAt, t.shadow, t.settledBy, t.agent, t.action, t.userId).where(sql`shadow is not null`),
  ],
);

/** A tool only the connected client can run; private input is never stored here, only the public response. */
export const clientToolRequests = pgTable(
  "client_tool_requests",
  {
    id: text("id").primaryKey(),
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id),
    sessionId: text("session_id").notNull(),
    userId: text("user_id").notNull(),
    callId: text("call_id").notNull(),
    name: text("name").notNull(),
    arguments: jsonb("arguments").$type<unknown>().notNull(),
    privateInput: boolean("private_input").notNull().default(false),
    inputSchema: jsonb("input_schema").$type<unknown>(),
    status: clientToolStatusEnum("status").notNull().default("pending"),
    publicOutput: jsonb("public_output").$type<unknown>(),
    submittedBy: text("submitted_by"),
    submittedVia: transportEnum("submitted_via"),
    submittedAt: timestamp("submitted_at", { withTimezone: true }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("client_tool_call_uq").on(t.responseId, t.callId),
    index("client_tool_pending_idx").on(t.expiresAt).where(sql`status = 'pending'`),
  ],
);

/**
 * One approver's vote on an approval that needs a quorum: the approval settles when enough distinct
 * approvers (never its requester) approved, or at the first denial.
 */
export const approvalVotes = pgTable(
  "approval_votes",
  {
    approvalId: text("approval_id")
      .notNull()
      .references(() => approvals.id),
    userId: text("user_id").notNull(),
    decision: text("decision", { enum: ["approve", "deny"] }).notNull(),
    via: transportEnum("via").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.approvalId, t.userId] })],
);

/**
 * The application handler's own store for `collect_card_details`: the only table private card
 * input reaches, and only as `last4` plus the rest sealed (AES-256-GCM with the secret key).
 */
export const paymentCards = pgTable("payment_cards", {
  id: text("id").primaryKey(),
  userId: text("user_id").notNull(),
  sessionId: text("session_id").notNull(),
  last4: text("last4").notNull(),
  /** `{number, expiry, name}` as JSON, encrypted with the secret key (additional data: the card id). */
  sealed: text("sealed").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** A policy suggestion an admin dismissed: not proposed again from a window of the same length (docs/analytics.md). */
export const policySuggestionDismissals = pgTable(
  "policy_suggestion_dismissals",
  {
    /** The change itself (its kind, agent, place in the file and rule), whatever else the file holds. */
    changeKey: text("change_key").notNull(),
    windowDays: integer("window_days").notNull(),
    dismissedBy: text("dismissed_by").notNull(),
    dismissedAt: timestamp("dismissed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.changeKey, t.windowDays] })],
);
