/** Roles, from least to most authority; `auditor` reads everything and decides nothing. */
export const ROLES = ["member", "auditor", "operator", "admin"] as const;
export type TRole = (typeof ROLES)[number];

/** Roles that may decide approvals and answer questions of any user in the workspace. */
export const DECIDER_ROLES: readonly TRole[] = ["operator", "admin"];
/** Roles that may read every user's objects (read-only for auditors). */
export const READ_ALL_ROLES: readonly TRole[] = ["operator", "admin", "auditor"];

export const RESPONSE_STATUSES = [
  "in_progress",
  "requires_action",
  "completed",
  "denied",
  "cancelled",
  "failed",
] as const;
export type TResponseStatus = (typeof RESPONSE_STATUSES)[number];

export const TERMINAL_STATUSES: readonly TResponseStatus[] = ["completed", "denied", "cancelled", "failed"];
export const isTerminal = (status: TResponseStatus): boolean => TERMINAL_STATUSES.includes(status);

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "expired", "cancelled"] as const;
export type TApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const CLIENT_TOOL_STATUSES = ["pending", "submitted", "expired", "cancelled"] as const;
export type TClientToolStatus = (typeof CLIENT_TOOL_STATUSES)[number];

export const RISKS = ["low", "medium", "high"] as const;

/**
 * How a gated request (a protected tool call or an external approval) ended, each in exactly one:
 * a person approved it as asked, approved it after an edit, denied it, denied it with a reply; it
 * expired or was cancelled; or nobody was asked: the policy (`never`, a predicate), a standing
 * grant, or the exec reviewer (allow or deny) settled it.
 */
export const DECISION_OUTCOMES = ["approved", "edited", "denied", "replied", "expired", "cancelled", "policy", "grant", "reviewer"] as const;
export type TDecisionOutcome = (typeof DECISION_OUTCOMES)[number];
/** The outcomes nobody was asked for (recorded as `settled_by`). */
export const AUTO_OUTCOMES = ["policy", "grant", "reviewer"] as const;
export type TAutoOutcome = (typeof AUTO_OUTCOMES)[number];

/** A notification's delivery state (`db/schema` reuses it for its enum). */
export const NOTIFICATION_STATUSES = ["pending", "delivered", "failed"] as const;
export type TNotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** A console user's account state, derived from its disabled/deleted timestamps. */
export const USER_STATUSES = ["active", "disabled", "deleted"] as const;
export type TUserStatus = (typeof USER_STATUSES)[number];
export type TRisk = (typeof RISKS)[number];

/** Where a decision or submission came from; recorded in the trajectory (`link`: a single-use link from a notification). */
export const TRANSPORTS = ["http", "websocket", "console", "system", "link", "slack"] as const;
export type TTransport = (typeof TRANSPORTS)[number];

export const STEP_STATUSES = ["running", "completed"] as const;
export type TStepStatus = (typeof STEP_STATUSES)[number];

/** Categories a trajectory can be filtered by (console audit, export). */
export const EVENT_CATEGORY_NAMES = ["model", "tool", "approval", "review", "question", "steering", "usage", "lifecycle"] as const;
export type TEventCategory = (typeof EVENT_CATEGORY_NAMES)[number];

/** Languages of the console and the answer page (BCP 47); the first is the fallback. */
export const LOCALES = ["en", "zh-CN"] as const;
export type TLocale = (typeof LOCALES)[number];

/** A session is active while one of its responses is unsettled (executing or waiting), else idle. */
export const SESSION_STATES = ["active", "idle"] as const;
export type TSessionState = (typeof SESSION_STATES)[number];

/**
 * Who decides before an agent's tool runs, as the Admin page names it: a person every time
 * (`always`), nobody (`never`), the exec reviewer first (`review`), a device's own rules
 * (`device`), the client (`client`), or the person asked (`person`, for questions).
 */
export const TOOL_POLICIES = ["always", "never", "review", "device", "client", "person"] as const;
export type TToolPolicy = (typeof TOOL_POLICIES)[number];

/** Where an agent's tool runs: on the server, on the client, as a question, or on a paired device. */
export const TOOL_KINDS = ["host", "client", "question", "device"] as const;
export type TToolKind = (typeof TOOL_KINDS)[number];
