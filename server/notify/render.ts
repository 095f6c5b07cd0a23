import { boundAndRedact, REDACTED } from "../core/redact";
import type { TRisk } from "../core/vocabulary";
import type { TNotifyEvent, TSubjectKind } from "./route";

/** An approval as stored, the fields a notification may draw from. */
export type TApprovalSource = { id: string; agent: string | null; toolName: string; action: string; message: string; arguments: unknown; risk: TRisk; expiresAt: Date };
/** A question as stored: only its texts are ever used, never answers or secret values. */
export type TQuestionSource = { id: string; agent: string | null; questions: ReadonlyArray<{ header: string; question: string; options?: ReadonlyArray<{ label: string }> }>; expiresAt: Date };

/** What every channel may show about a subject: secret-free by construction. */
export type TSubjectView =
  | { kind: "approval"; id: string; agent: string | null; tool: string; action: string; risk: TRisk; message: string; arguments: unknown; expiresAt: string }
  | { kind: "question"; id: string; agent: string | null; questions: Array<{ header: string; question: string; options: string[] }>; expiresAt: string };

/** The stored payload of a notification (links for email are added at send time). */
export type TNotificationPayload = { event: TNotifyEvent; subject: TSubjectView; links: { console: string }; bindingHash?: string };

const SECRET_NAME = "[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|pass|pwd|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential|cookie)[A-Za-z0-9_.-]*";
const VALUE = `("[^"]*"|'[^']*'|[^\\s"'&;|]+)`;
const TEXT_SECRETS: Array<[RegExp, string]> = [
  // Authorization schemes
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/gi, `$1 ${REDACTED}`],
  // NAME=value, NAME: value, --name=value
  [new RegExp(`(${SECRET_NAME})(["']?\\s*[=:]\\s*)${VALUE}`, "gi"), `$1$2${REDACTED}`],
  // --name value
  [new RegExp(`(\\s--?${SECRET_NAME})(\\s+)${VALUE}`, "gi"), `$1$2${REDACTED}`],
  // credentials inside URLs
  [/([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, `$1${REDACTED}@`],
  // well-known key formats: Stripe/OpenAI-like, GitHub, Slack, AWS, JWT, PEM
  [/\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\bAKIA[0-9A-Z]{16}\b/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}/g, REDACTED],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
];

/** Long opaque tokens mixing letters and digits; our own ids such as session_<hex> stay. */
const OPAQUE = /\b(?![a-z]+_[0-9a-f]{32}\b)(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b/g;

/**
 * Whether a long word looks random rather than written by someone: mixed case with several digits
 * (base64-like), all hex, or dense in digits (base36-like). `build-e2e-mx3ie8vd-h5tbom-marker` is
 * shown; `kXKRWrh-X9Hft0Nrhys_VubMqbjHMceN` is not.
 */
function looksRandom(word: string): boolean {
  const digits = word.replace(/\D/g, "").length;
  if (/[A-Z]/.test(word) && /[a-z]/.test(word) && digits >= 3) return true;
  if (/^[0-9a-f]+$/i.test(word)) return true;
  return digits / word.length >= 0.25;
}

/**
 * Removes secret-looking parts of free text (a command such as `export API_TOKEN=sk-live-…`):
 * assignments to secret-named variables, authorization schemes, URL credentials, well-known key
 * formats and long opaque tokens. Card-like digit runs are masked by `boundAndRedact`.
 */
export function scrubText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of TEXT_SECRETS) out = out.replace(pattern, replacement);
  return out.replace(OPAQUE, (word) => (looksRandom(word) ? REDACTED : word));
}

/** Bounds and redacts structured data (secret keys, card numbers), then scrubs every string in it. */
export function scrubValue(value: unknown): unknown {
  const bounded = boundAndRedact(value, { maxDepth: 4, maxKeys: 30, maxString: 500, maxArray: 20 });
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return scrubText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(bounded);
}

const short = (text: string, max: number): string => {
  const scrubbed = scrubText(String(boundAndRedact(text, { maxDepth: 1, maxKeys: 1, maxString: max, maxArray: 1 })));
  return scrubbed;
};

/** The secret-free view of an approval: redacted arguments, scrubbed message, never the reviewer's notes. */
export function approvalView(a: TApprovalSource): TSubjectView {
  return { kind: "approval", id: a.id, agent: a.agent, tool: a.toolName, action: a.action, risk: a.risk, message: short(a.message, 500), arguments: scrubValue(a.arguments), expiresAt: a.expiresAt.toISOString() };
}

/** The secret-free view of a question: header, question and option texts only. */
export function questionView(q: TQuestionSource): TSubjectView {
  return {
    kind: "question",
    id: q.id,
    agent: q.agent,
    questions: q.questions.map((x) => ({ header: short(x.header, 40), question: short(x.question, 500), options: (x.options ?? []).map((o) => short(o.label, 80)) })),
    expiresAt: q.expiresAt.toISOString(),
  };
}

/** The login-protected console page of a subject (channel-wide messages link only here). */
export function consoleLink(publicUrl: string, kind: TSubjectKind, id: string): string {
  const base = publicUrl.replace(/\/+$/, "");
  return kind === "approval" ? `${base}/approvals?focus=${encodeURIComponent(id)}` : `${base}/answer/${encodeURIComponent(id)}`;
}

const EVENT_TITLE: Record<TNotifyEvent, string> = { requested: "", reminder: "Reminder: ", escalation: "Escalated: " };

/** One line naming what is waiting. */
export function headline(payload: TNotificationPayload): string {
  const s = payload.subject;
  const agent = s.agent ? ` (agent ${s.agent})` : "";
  if (s.kind === "approval") return `${EVENT_TITLE[payload.event]}Approval needed, ${s.risk} risk${agent}: ${s.message}`;
  return `${EVENT_TITLE[payload.event]}Question waiting${agent}: ${s.questions.map((q) => q.question).join(" / ")}`;
}

/** The generic webhook body (signed; see sign.ts). */
export function webhookBody(notificationId: string, payload: TNotificationPayload): Record<string, unknown> {
  return { id: notificationId, type: `${payload.subject.kind}.${payload.event}`, event: payload.event, subject: payload.subject, links: payload.links, text: headline(payload) };
}

/** Action ids of the Slack buttons (and the reply field) that `POST /v1/slack/interactions` understands. */
export const SLACK_ACTIONS = { approve: "countersign_approve", deny: "countersign_deny", reply: "countersign_reply", replyText: "countersign_reply_text", replyBlock: "countersign_reply" } as const;

/** What a Slack button carries: the approval and the binding the message showed. */
export type TSlackButtonValue = { approvalId: string; bindingHash: string };

type TSlackMessage = { text: string; blocks?: Array<Record<string, unknown>> };

const plain = (text: string) => ({ type: "plain_text", text });

/**
 * A Slack message: text with a link to decide or answer. On an interactive channel an approval
 * also gets Block Kit Approve / Deny buttons and a Reply field with its button (reply instead).
 */
export function slackMessage(payload: TNotificationPayload, options: { buttons?: boolean } = {}): TSlackMessage {
  const verb = payload.subject.kind === "approval" ? "Review and decide" : "Answer";
  const lines = [headline(payload)];
  if (payload.subject.kind === "approval") lines.push(`Action: ${payload.subject.action} · expires ${payload.subject.expiresAt}`);
  else for (const q of payload.subject.questions) if (q.options.length) lines.push(`${q.header}: ${q.options.join(" | ")}`);
  lines.push(`<${payload.links.console}|${verb} in Countersign> (sign-in required)`);
  const text = lines.join("\n");
  if (!options.buttons || payload.subject.kind !== "approval" || !payload.bindingHash) return { text };
  const value = JSON.stringify({ approvalId: payload.subject.id, bindingHash: payload.bindingHash } satisfies TSlackButtonValue);
  return {
    text,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text } },
      {
        type: "input",
        block_id: SLACK_ACTIONS.replyBlock,
        optional: true,
        label: plain("Reply instead (the agent gets this message and goes on)"),
        element: { type: "plain_text_input", action_id: SLACK_ACTIONS.replyText, multiline: true, max_length: 2000 },
      },
      {
        type: "actions",
        block_id: "countersign_decide",
        elements: [
          { type: "button", action_id: SLACK_ACTIONS.approve, style: "primary", text: plain("Approve"), value },
          { type: "button", action_id: SLACK_ACTIONS.deny, style: "danger", text: plain("Deny"), value },
          { type: "button", action_id: SLACK_ACTIONS.reply, text: plain("Reply"), value },
        ],
      },
    ],
  };
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** An email to one person: a single-use link when they may act, else the console link (sign-in). */
export function emailMessage(payload: TNotificationPayload, link: { url: string; singleUse: boolean; expiresAt?: Date }): { subject: string; text: string; html: string } {
  const s = payload.subject;
  const subject = headline(payload).slice(0, 150);
  const details: string[] = [];
  if (s.kind === "approval") {
    details.push(`Action: ${s.action} (${s.tool})`, `Risk: ${s.risk}`, `Arguments: ${JSON.stringify(s.arguments)}`);
  } else {
    for (const q of s.questions) details.push(`${q.header}: ${q.question}${q.options.length ? ` [${q.options.join(" | ")}]` : ""}`);
  }
  details.push(`Expires: ${s.expiresAt}`, `Reference: ${s.id}`);
  const verb = s.kind === "approval" ? "Approve or deny" : "Answer";
  const how = link.singleUse ? `This link works once${link.expiresAt ? `, until ${link.expiresAt.toISOString()}` : ""}. Do not forward it.` : "Sign-in required.";
  const text = [headline(payload), "", ...details, "", `${verb}: ${link.url}`, how, ""].join("\n");
  const html = `<p>${escapeHtml(headline(payload))}</p><ul>${details.map((d) => `<li>${escapeHtml(d)}</li>`).join("")}</ul><p><a href="${escapeHtml(link.url)}">${verb}</a></p><p>${escapeHtml(how)}</p>`;
  return { subject, text, html };
}
