import { operationText, operationView, partLabel, type TOperationPart } from "../core/operation-view";
import { personLabel } from "../core/person";
import { boundAndRedact, REDACTED } from "../core/redact";
import type { TRisk } from "../core/vocabulary";
import type { TNotifyEvent, TSubjectKind } from "./route";

/** An approval as stored, the fields a notification may draw from. */
export type TApprovalSource = {
  id: string;
  agent: string | null;
  toolName: string;
  action: string;
  message: string;
  arguments: unknown;
  risk: TRisk;
  expiresAt: Date;
  /** The exec reviewer that asked a person, and why (null: no reviewer looked at it). */
  reviewer?: string | null;
  reviewerRationale?: string | null;
  /** Who started the run (or requested the approval over /v1). */
  requester?: { name: string | null; email: string | null } | null;
};
/** A question as stored: only its texts are ever used, never answers or secret values. */
export type TQuestionSource = { id: string; agent: string | null; questions: ReadonlyArray<{ header: string; question: string; options?: ReadonlyArray<{ label: string }> }>; expiresAt: Date };

/**
 * The operation as a notification shows it: the operation view of the redacted arguments, each
 * part scrubbed of secrets and bounded. `complete` is false when anything was cut or hidden (then
 * the message says so and links to the console, and Slack offers no Approve button).
 */
export type TShownOperation = { title: string; parts: TOperationPart[]; complete: boolean };

/** The exec reviewer's verdict on an approval: a person is asked only after an `ask`. */
export type TShownReview = { reviewer: string; decision: "ask"; rationale: string | null };

/** What every channel may show about a subject: secret-free by construction. */
export type TSubjectView =
  | {
      kind: "approval";
      id: string;
      agent: string | null;
      tool: string;
      action: string;
      risk: TRisk;
      message: string;
      /** Redacted and bounded as before (webhook receivers read it); people read `operation`. */
      arguments: unknown;
      expiresAt: string;
      /** Absent in payloads stored before it existed: channels then treat the arguments as cut. */
      operation?: TShownOperation;
      review?: TShownReview | null;
      /** "Name (email)" of the requester. */
      requester?: string | null;
    }
  | { kind: "question"; id: string; agent: string | null; questions: Array<{ header: string; question: string; options: string[] }>; expiresAt: string };

export type TApprovalView = Extract<TSubjectView, { kind: "approval" }>;

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

/**
 * How much of an operation a notification carries: each part (an argument, a command, a diff) up
 * to 3,000 characters, Slack's limit for the text of one section; at most 40 parts, Slack's 50
 * blocks per message less the message's own. Email shows the same, so every channel shows the same
 * thing; what is cut is said to be cut, and the console shows everything.
 */
export const SHOWN_PART_MAX = 3000;
export const SHOWN_PARTS_MAX = 40;
/** Key-based redaction first (secret-named keys, card numbers); strings are already bounded here, structures generously. */
const SHOWN_BOUNDS = { maxDepth: 8, maxKeys: 100, maxArray: 100, maxString: SHOWN_PART_MAX };
/** An argument's name: long names are cut like any other text. */
const LABEL_MAX = 200;

const cutText = (text: string, max: number): string => `${text.slice(0, max)}… [${text.length - max} more characters]`;

/**
 * The operation view of an approval's arguments: redacted, scrubbed, bounded. `complete` tells
 * whether it shows the operation whole: false when anything was cut or hidden (a secret-named
 * key, a card number, a secret-looking word), since nobody may approve what they could not read.
 */
export function shownOperation(action: string, args: unknown): TShownOperation {
  let complete = true;
  const partial = () => {
    complete = false;
  };
  const redacted = boundAndRedact(args, { ...SHOWN_BOUNDS, onCut: partial, onRedact: partial });
  const view = operationView(action, redacted);
  const scrubbed = (text: string): string => {
    const out = scrubText(text);
    if (out !== text) complete = false;
    return out;
  };
  const parts = view.parts.slice(0, SHOWN_PARTS_MAX).map((part): TOperationPart => {
    let label = scrubbed(partLabel(part));
    if (label.length > LABEL_MAX) {
      label = cutText(label, LABEL_MAX);
      complete = false;
    }
    let text = scrubbed(part.text);
    if (text.length > SHOWN_PART_MAX) {
      text = cutText(text, SHOWN_PART_MAX);
      complete = false;
    }
    // The label already says which edit of several a part belongs to (stored views are worded once).
    return { kind: part.kind, label, text };
  });
  if (view.parts.length > SHOWN_PARTS_MAX) complete = false;
  const title = scrubbed(view.title);
  return { title, parts, complete };
}

/** The operation of an approval view; a payload stored before views had one is shown from its arguments, as cut. */
export function operationOf(view: TApprovalView): TShownOperation {
  if (view.operation) return view.operation;
  const fallback = shownOperation(view.action, view.arguments);
  return { ...fallback, complete: false };
}

/** The secret-free view of an approval: the operation (redacted, bounded), scrubbed message and verdict, the requester. */
export function approvalView(a: TApprovalSource): TApprovalView {
  return {
    kind: "approval",
    id: a.id,
    agent: a.agent,
    tool: a.toolName,
    action: a.action,
    risk: a.risk,
    message: short(a.message, 500),
    arguments: scrubValue(a.arguments),
    expiresAt: a.expiresAt.toISOString(),
    operation: shownOperation(a.action, a.arguments),
    review: a.reviewer ? { reviewer: a.reviewer, decision: "ask", rationale: a.reviewerRationale ? short(a.reviewerRationale, 2000) : null } : null,
    requester: a.requester ? personLabel(a.requester) : null,
  };
}

/** "Exec reviewer `rules` asked a person: …", as the console words it; "No reviewer looked at it." without one. */
export function reviewSentence(review: TShownReview | null | undefined): string {
  if (!review) return "No reviewer looked at it; a person decides.";
  return `Exec reviewer ${review.reviewer} asked a person${review.rationale ? `: ${review.rationale}` : "."}`;
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

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** How an operation's cut arguments are announced, with where to see all of them. */
export const CUT_SENTENCE = "Some arguments are not shown here in full (too long, or secret-looking values hidden as [redacted]); the console shows all of them.";

/** An email to one person: a single-use link when they may act, else the console link (sign-in). */
export function emailMessage(payload: TNotificationPayload, link: { url: string; singleUse: boolean; expiresAt?: Date }): { subject: string; text: string; html: string } {
  const s = payload.subject;
  const subject = headline(payload).slice(0, 150);
  const details: string[] = [];
  let operationTextPart = "";
  let operationHtml = "";
  if (s.kind === "approval") {
    const operation = operationOf(s);
    details.push(`Action: ${s.action} (tool ${s.tool})`, `Risk: ${s.risk}`);
    if (s.agent) details.push(`Agent: ${s.agent}`);
    if (s.requester) details.push(`Requested by: ${s.requester}`);
    details.push(`Message: ${s.message}`, `Reviewer: ${reviewSentence(s.review)}`);
    const cut = operation.complete ? "" : `${CUT_SENTENCE} ${payload.links.console}`;
    operationTextPart = ["Arguments:", operationText(operation), ...(cut ? ["", cut] : []), ""].join("\n");
    operationHtml =
      `<p><strong>Arguments</strong></p>${operation.parts.map(partHtml).join("")}` +
      (operation.complete ? "" : `<p><strong>${escapeHtml(CUT_SENTENCE)}</strong> <a href="${escapeHtml(payload.links.console)}">Open in Countersign</a></p>`);
  } else {
    for (const q of s.questions) details.push(`${q.header}: ${q.question}${q.options.length ? ` [${q.options.join(" | ")}]` : ""}`);
  }
  details.push(`Expires: ${s.expiresAt}`, `Reference: ${s.id}`);
  const verb = s.kind === "approval" ? "Approve or deny" : "Answer";
  const how = link.singleUse ? `This link works once${link.expiresAt ? `, until ${link.expiresAt.toISOString()}` : ""}. Do not forward it.` : "Sign-in required.";
  const text = [headline(payload), "", ...details, "", ...(operationTextPart ? [operationTextPart] : []), `${verb}: ${link.url}`, how, ""].join("\n");
  const html = `<p>${escapeHtml(headline(payload))}</p><ul>${details.map((d) => `<li>${escapeHtml(d)}</li>`).join("")}</ul>${operationHtml}<p><a href="${escapeHtml(link.url)}">${verb}</a></p><p>${escapeHtml(how)}</p>`;
  return { subject, text, html };
}

/** One part of an operation in HTML: its name, and its value (a command, content, a diff, a number) preformatted, as Slack shows it. */
const partHtml = (part: TOperationPart): string => `<p>${escapeHtml(part.label)}:</p><pre>${escapeHtml(part.text)}</pre>`;
