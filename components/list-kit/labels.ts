import { createTranslator, useTranslations } from "next-intl";
import en from "../../messages/en.json";
import {
  type TDecisionOutcome,
  type TNotificationStatus,
  TRANSPORTS,
  type TResponseStatus,
  type TRisk,
  type TRole,
  type TToolKind,
  type TToolPolicy,
  type TTransport,
  type TUserStatus,
} from "../../server/core/vocabulary";

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
  outcome: Record<TDecisionOutcome, string>;
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
    /** How a gated request was settled (decision analytics). */
    outcome: (v: TDecisionOutcome) => t(`outcome.${v}`),
  };
}

/** Whether a recorded channel is one the server names (older rows may hold others). */
export const isTransport = (via: string): via is TTransport => (TRANSPORTS as readonly string[]).includes(via);

/** A status's badge tone class, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
export const NOTIFICATION_STATUS_TONE: Record<TNotificationStatus, string> = { pending: "tone-warn", delivered: "tone-ok", failed: "tone-bad" };

/** A status's badge tone class, spelled out whole (scripts/css-selectors.test.ts finds each class in the source). */
export const USER_STATUS_TONE: Record<TUserStatus, string> = { active: "tone-ok", disabled: "tone-warn", deleted: "tone-muted" };

type TRefusalCode = import("@/server/core/separation-of-duties").TDecisionRefusal;
type TErrorReason = import("@/server/core/error-reasons").TErrorReason;
type TReviewerCode = { code: import("@/server/core/reviewer-sentences").TReviewerSentence; detail: string | null };
type TServerTextMessages = {
  refusal: Record<TRefusalCode["code"], string>;
  reason: Record<Exclude<TErrorReason["code"], TRefusalCode["code"]>, string>;
  reviewer: Record<TReviewerCode["code"], string>;
  summary: Record<TSummaryFacts["key"], string>;
  tool: Record<string, string>;
  agent: Record<string, string>;
};
export type TServerText = TCoversServerText<(typeof en)["serverText"]>;
type TCoversServerText<T extends TServerTextMessages> = T;

/** The English catalogue's server texts: what the server itself writes, to recognise its sentences. */
const ENGLISH = createTranslator({ locale: "en", messages: en, namespace: "serverText" });

/** An approval as the console gets it: the action, its arguments and the summary the tool wrote (`message`). */
type TSummarised = { action: string; arguments?: unknown; message: string };

/**
 * The facts of a built-in tool's one-line summary: the tool and the operation's key argument (the
 * command, the text), read from the arguments; where the summary names something the arguments do
 * not (the working directory, the device), from the tool's sentence. Null for other tools.
 */
type TSummaryFacts =
  | { key: "exec"; params: { command: string; inWorkspace: "yes" | "no"; cwd: string } }
  | { key: "echo"; params: { text: string } }
  | { key: "nodeInvoke"; params: { command: string; args: string; device: string; declared: "yes" | "no" | "unknown"; list: string } };

/** The note a node command's approval ends with: whether the agent's harness declared the command (server/devices/run-device-tool.ts). */
const DECLARED_NOTE = / The agent's harness (declared|did not declare) this command \(it declared: (.*)\)\.$/;

/** The text between `prefix` and a final "?" of `message`, or null when it has another shape. */
const between = (message: string, prefix: string): string | null => (message.startsWith(prefix) && message.endsWith("?") ? message.slice(prefix.length, -1) : null);

function summaryFacts(a: TSummarised): TSummaryFacts | null {
  const args = a.arguments && typeof a.arguments === "object" ? (a.arguments as Record<string, unknown>) : null;
  if (!args) return null;
  if (a.action === "tool:exec" && typeof args.command === "string") {
    const where = between(a.message, `Run \`${args.command}\` in `);
    if (where === "the workspace") return { key: "exec", params: { command: args.command, inWorkspace: "yes", cwd: "" } };
    if (where?.startsWith("./")) return { key: "exec", params: { command: args.command, inWorkspace: "no", cwd: where.slice(2) } };
    return null;
  }
  if (a.action === "tool:echo" && typeof args.text === "string") return { key: "echo", params: { text: JSON.stringify(args.text) } };
  if (a.action.startsWith("node:") && typeof args.command === "string") {
    const list = Array.isArray(args.args) && args.args.length > 0 ? ` ${JSON.stringify(args.args)}` : "";
    const note = DECLARED_NOTE.exec(a.message);
    const device = between(note ? a.message.slice(0, note.index) : a.message, `Run ${args.command}${list} on device `);
    const declared = note ? (note[1] === "declared" ? "yes" : "no") : "unknown";
    return device ? { key: "nodeInvoke", params: { command: args.command, args: list, device, declared, list: note?.[2] ?? "" } } : null;
  }
  return null;
}

/** Known reason codes of the server's refusals (anything else on the wire is shown as the server's English). */
const isRefusal = (r: { code: string }): r is TRefusalCode => Object.hasOwn(en.serverText.refusal, r.code);
const isReason = (value: unknown): value is TErrorReason =>
  typeof value === "object" && value !== null && typeof (value as { code?: unknown }).code === "string" && (Object.hasOwn(en.serverText.reason, (value as { code: string }).code) || isRefusal(value as { code: string }));

/**
 * Sentences the server makes, worded in the page's language from the code it sends with them: why
 * the caller may not decide an approval, why a request was refused (the `serverText` of a failed
 * call), the rationales the server's own reviewers write, a built-in tool's summary of an approval,
 * and the built-in tools' and agents' descriptions. Without a code (a model reviewer's words, a
 * plugin's tool, a client's own summary), the server's text is shown as written.
 */
export function useServerText() {
  const t = useTranslations("serverText");
  const vocab = useTranslations("vocab");
  return serverTextIn(t, vocab);
}

/** {@link useServerText} for given translators (`serverText` and `vocab` of one catalogue). */
export function serverTextIn(t: ReturnType<typeof useTranslations<"serverText">>, vocabT: ReturnType<typeof useTranslations<"vocab">>) {
  const refusal = (r: TRefusalCode): string => ("params" in r ? t(`refusal.${r.code}`, r.params) : t(`refusal.${r.code}`));
  /** A known built-in text: the page's wording when the server's text is the English one of `key`, else the server's text. */
  const builtIn = (group: "tool" | "agent", name: string, text: string): string => {
    const messages: Record<string, string> = en.serverText[group];
    if (!Object.hasOwn(messages, name) || messages[name] !== text) return text;
    return t(`${group}.${name}` as Parameters<typeof t>[0]);
  };
  return {
    refusal,
    /** Why a request was refused, from the `serverText` code of its error; null for a code this console does not know. */
    reason: (value: unknown): string | null => {
      if (!isReason(value)) return null;
      const r = value;
      if (isRefusal(r)) return refusal(r);
      switch (r.code) {
        case "bulkNotYours":
          return isRefusal(r.refusal) ? t("reason.bulkNotYours", { n: r.params.n, refusal: refusal(r.refusal) }) : null;
        case "responseClosed": {
          const status = Object.hasOwn(en.vocab.responseStatus, r.params.status) ? vocabT(`responseStatus.${r.params.status as TResponseStatus}`) : r.params.status;
          return t("reason.responseClosed", { ...r.params, status });
        }
        case "editReviewDenied": {
          // The risk is the console's own word; a rationale the server wrote is worded too, a model's is shown as written.
          const risk = Object.hasOwn(en.vocab.risk, r.params.risk) ? vocabT(`risk.${r.params.risk as TRisk}`) : r.params.risk;
          const rationale = r.reviewer && Object.hasOwn(en.serverText.reviewer, r.reviewer.code) ? t(`reviewer.${r.reviewer.code}`, { detail: r.reviewer.detail ?? "" }) : r.params.rationale;
          return t("reason.editReviewDenied", { risk, rationale });
        }
        case "questionSettled":
          return t("reason.questionSettled", { ...r.params, named: r.params.by ? "yes" : "no" });
        default:
          return "params" in r ? t(`reason.${r.code}`, r.params as Record<string, string | number>) : t(`reason.${r.code}`);
      }
    },
    rationale: (text: string | null | undefined, code: TReviewerCode | null | undefined): string | null =>
      code ? t(`reviewer.${code.code}`, { detail: code.detail ?? "" }) : (text ?? null),
    /**
     * The approval's one-line summary in the page's language: a built-in tool's summary is worded
     * from its facts; any other (a plugin's or an MCP server's tool, a client's own words) is the
     * stored `message` as written. The API's `message` stays the tool's English sentence.
     */
    summary: (a: TSummarised): string => {
      const facts = summaryFacts(a);
      if (!facts || ENGLISH(`summary.${facts.key}`, facts.params) !== a.message) return a.message;
      return t(`summary.${facts.key}`, facts.params);
    },
    /** A built-in tool's description (what the model reads) in the page's language; others as configured. */
    toolDescription: (name: string, description: string): string => builtIn("tool", name, description),
    /** A built-in agent's description in the page's language; others as configured. */
    agentDescription: (name: string, description: string): string => builtIn("agent", name, description),
  };
}
