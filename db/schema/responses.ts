import { sql } from "drizzle-orm";
import { bigserial, index, integer, json, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import type { TEnvelope, TOutputItem, TUsage } from "../../server/core/envelope";
import type { TAttachmentFact } from "../../server/core/media";
import type { TAgentPolicy } from "../../server/core/agent-policy";
import type { TPendingRef } from "../../server/core/pending";
import type { TCredential } from "../../server/core/credential";
import { RESPONSE_STATUSES, STEP_STATUSES, TRANSPORTS } from "../../server/core/vocabulary";
import { users } from "./auth";

export const responseStatusEnum = pgEnum("response_status", RESPONSE_STATUSES);
export const stepStatusEnum = pgEnum("step_status", STEP_STATUSES);
export const transportEnum = pgEnum("transport", TRANSPORTS);

/** A conversation with one agent; owns a workspace directory. */
export const agentSessions = pgTable(
  "agent_sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    agent: text("agent").notNull(),
    workspaceDir: text("workspace_dir").notNull(),
    /** `full`: node commands the harness declared run on paired devices without a prompt (see server/devices). */
    access: text("access", { enum: ["default", "full"] }).notNull().default("default"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("agent_sessions_user_idx").on(t.userId, t.createdAt),
    // Console session list: newest first (keyset on created_at, id), optionally by agent.
    index("agent_sessions_created_idx").on(t.createdAt, t.id),
    index("agent_sessions_agent_idx").on(t.agent, t.createdAt, t.id),
  ],
);

/** One invocation of an agent (a harness attempt); the envelope is stored before the status turns terminal. */
export const responses = pgTable(
  "responses",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => agentSessions.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    agent: text("agent").notNull(),
    status: responseStatusEnum("status").notNull().default("in_progress"),
    // json, not jsonb: the input is kept byte-for-byte in the caller's key order (schemas, forms).
    input: json("input").$type<unknown>().notNull(),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull().default({}),
    /** The admitted input attachments' facts (the bytes are in `media`). */
    attachments: jsonb("attachments").$type<TAttachmentFact[]>().notNull().default([]),
    output: jsonb("output").$type<TOutputItem[]>().notNull().default([]),
    usage: jsonb("usage").$type<TUsage>().notNull().default({ inputTokens: 0, outputTokens: 0 }),
    error: jsonb("error").$type<{ code: string; message: string } | null>(),
    envelope: jsonb("envelope").$type<TEnvelope | null>(),
    approvalTtlMs: integer("approval_ttl_ms").notNull(),
    clientToolTtlMs: integer("client_tool_ttl_ms").notNull(),
    nextSeq: integer("next_seq").notNull().default(0),
    nextFrameSeq: integer("next_frame_seq").notNull().default(0),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    cancelReason: text("cancel_reason"),
    /** What a `requires_action` run waits on (null otherwise); every kind the same way. */
    pendingAction: jsonb("pending_action").$type<TPendingRef | null>(),
    /** The agent's policy when the run started (approval, predicates, approvers, quorum, grants...): a config reload applies to later runs only. */
    agentPolicy: jsonb("agent_policy").$type<TAgentPolicy | null>(),
    /** Time the run's attempts spent executing, summed at each suspension: the execution deadline counts this, not waits for people. */
    activeMs: integer("active_ms").notNull().default(0),
    /** The credential that started the run (an API key or a console session, by id): its source. Revoking it revokes the run's retained source authority. Null: started by the server itself. */
    sourceCredential: jsonb("source_credential").$type<TCredential | null>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp("completed_at", { withTimezone: true }),
  },
  (t) => [
    index("responses_session_idx").on(t.sessionId, t.createdAt),
    index("responses_user_idx").on(t.userId, t.createdAt),
    index("responses_active_idx").on(t.status).where(sql`status in ('in_progress','requires_action')`),
    // Console response list and usage: newest first (keyset on created_at, id), by status or agent.
    index("responses_created_idx").on(t.createdAt, t.id),
    index("responses_status_created_idx").on(t.status, t.createdAt, t.id),
    index("responses_agent_created_idx").on(t.agent, t.createdAt, t.id),
  ],
);

/** The step log: completed steps keep their results so a resumed attempt never re-runs them. */
export const responseSteps = pgTable(
  "response_steps",
  {
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id),
    key: text("key").notNull(),
    status: stepStatusEnum("status").notNull(),
    result: jsonb("result").$type<unknown>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp("completed_at", { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.responseId, t.key] })],
);

/**
 * The trajectory: every state change of a response, in order (`seq`, gap-free).
 * Events that are also wire frames carry `frameSeq`, the `sequence` clients see and resume from.
 */
export const responseEvents = pgTable(
  "response_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id),
    sessionId: text("session_id").notNull(),
    seq: integer("seq").notNull(),
    frameSeq: integer("frame_seq"),
    type: text("type").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    actorUserId: text("actor_user_id"),
    transport: transportEnum("transport"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("response_events_seq_uq").on(t.responseId, t.seq),
    uniqueIndex("response_events_frame_uq").on(t.responseId, t.frameSeq),
    index("response_events_session_idx").on(t.sessionId, t.id),
    // Trajectory audit: the few events a person caused (actor filter and its choices).
    index("response_events_response_actor_idx").on(t.responseId, t.actorUserId).where(sql`actor_user_id is not null`),
    index("response_events_session_actor_idx").on(t.sessionId, t.actorUserId).where(sql`actor_user_id is not null`),
  ],
);
