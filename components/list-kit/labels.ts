import type { TNotificationStatus, TResponseStatus, TRole, TUserStatus } from "@/server/core/vocabulary";

/**
 * How the console names the server's vocabularies. Keyed by the server's own types, so a value
 * the server adds is a type error here until it has a label (the lists themselves are imported
 * from `server/core/vocabulary`, never retyped).
 */
export const RESPONSE_STATUS_LABEL: Record<TResponseStatus, string> = {
  in_progress: "running",
  requires_action: "waiting",
  completed: "completed",
  denied: "denied",
  cancelled: "cancelled",
  failed: "failed",
};

/** What each role may do, beside its name. */
export const ROLE_TEXT: Record<TRole, string> = {
  member: "sees and decides only its own",
  auditor: "reads everything, decides nothing",
  operator: "decides any approval, answers any question",
  admin: "operator + users, roles, keys and devices",
};

export const NOTIFICATION_STATUS_TONE: Record<TNotificationStatus, string> = { pending: "warn", delivered: "ok", failed: "bad" };

export const USER_STATUS_TONE: Record<TUserStatus, string> = { active: "ok", disabled: "warn", deleted: "muted" };
