import { useTranslations } from "next-intl";
import type en from "@/messages/en.json";
import {
  type TNotificationStatus,
  TRANSPORTS,
  type TResponseStatus,
  type TRisk,
  type TRole,
  type TToolKind,
  type TToolPolicy,
  type TTransport,
  type TUserStatus,
} from "@/server/core/vocabulary";

/**
 * How the console names the server's vocabularies: one message per value, under `vocab.*` in each
 * catalogue. The shape below is keyed by the server's own types, so a value the server adds is a
 * type error here until the English catalogue (and so every catalogue) has its label.
 */
type TVocabMessages = {
  responseStatus: Record<TResponseStatus, string>;
  role: Record<TRole, string>;
  roleText: Record<TRole, string>;
  risk: Record<TRisk, string>;
  notificationStatus: Record<TNotificationStatus, string>;
  userStatus: Record<TUserStatus, string>;
  via: Record<TTransport, string>;
  toolPolicy: Record<TToolPolicy, string>;
  toolKind: Record<TToolKind, string>;
};
type TCovers<T extends TVocabMessages> = T;
export type TVocab = TCovers<(typeof en)["vocab"]>;

/** The vocabularies' labels in the page's language. */
export function useVocab() {
  const t = useTranslations("vocab");
  return {
    responseStatus: (v: TResponseStatus) => t(`responseStatus.${v}`),
    role: (v: TRole) => t(`role.${v}`),
    /** What each role may do, beside its name. */
    roleText: (v: TRole) => t(`roleText.${v}`),
    /** The risk in one word ("low"); the badge says "Low risk" in full. */
    risk: (v: TRisk) => t(`risk.${v}`),
    notificationStatus: (v: TNotificationStatus) => t(`notificationStatus.${v}`),
    userStatus: (v: TUserStatus) => t(`userStatus.${v}`),
    /** How a decision reached the server (`decided_via`). */
    via: (v: TTransport) => t(`via.${v}`),
    /** Who decides before an agent's tool runs (`console.agents` sends the code). */
    toolPolicy: (v: TToolPolicy) => t(`toolPolicy.${v}`),
    /** Where an agent's tool runs. */
    toolKind: (v: TToolKind) => t(`toolKind.${v}`),
  };
}

/** Whether a recorded channel is one the server names (older rows may hold others). */
export const isTransport = (via: string): via is TTransport => (TRANSPORTS as readonly string[]).includes(via);

export const NOTIFICATION_STATUS_TONE: Record<TNotificationStatus, string> = { pending: "warn", delivered: "ok", failed: "bad" };

export const USER_STATUS_TONE: Record<TUserStatus, string> = { active: "ok", disabled: "warn", deleted: "muted" };

type TRefusalCode = import("@/server/core/separation-of-duties").TDecisionRefusal;
type TReviewerCode = { code: import("@/server/core/reviewer-sentences").TReviewerSentence; detail: string | null };
type TServerTextMessages = {
  refusal: Record<TRefusalCode["code"], string>;
  reviewer: Record<TReviewerCode["code"], string>;
};
export type TServerText = TCoversServerText<(typeof en)["serverText"]>;
type TCoversServerText<T extends TServerTextMessages> = T;

/**
 * Sentences the server makes, worded in the page's language from the code it sends with them: why
 * the caller may not decide an approval, and the rationales the server's own reviewers write.
 * Without a code (a model reviewer's words), the server's text is shown as written.
 */
export function useServerText() {
  const t = useTranslations("serverText");
  return {
    refusal: (r: TRefusalCode): string => ("params" in r ? t(`refusal.${r.code}`, r.params) : t(`refusal.${r.code}`)),
    rationale: (text: string | null | undefined, code: TReviewerCode | null | undefined): string | null =>
      code ? t(`reviewer.${code.code}`, { detail: code.detail ?? "" }) : (text ?? null),
  };
}
