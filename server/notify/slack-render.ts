import type { TOperationPart } from "../core/operation-view";
import { CUT_SENTENCE, headline, operationOf, reviewSentence, type TApprovalView, type TNotificationPayload, type TShownOperation } from "./render";

/**
 * Slack messages: Block Kit built from the notification payload. Every text that comes from a
 * requester, an agent or a tool (message, arguments, names, question texts, the reviewer's words)
 * is escaped for Slack's mrkdwn, code blocks included; the only link in a message is our own,
 * built from our URL and our label.
 */

/** Action ids of the Slack buttons, the reply form and its field that `POST /v1/slack/interactions` understands. */
export const SLACK_ACTIONS = {
  approve: "countersign_approve",
  deny: "countersign_deny",
  reply: "countersign_reply",
  /** The link button to the console: Slack reports its clicks too; they are acknowledged and change nothing. */
  open: "countersign_open",
  /** The reply form (a modal): its callback id, and the block and action ids of its text field. */
  replyView: "countersign_reply_view",
  replyBlock: "countersign_reply",
  replyText: "countersign_reply_text",
} as const;

/** What a Slack button carries: the approval and the binding the message showed. */
export type TSlackButtonValue = { approvalId: string; bindingHash: string };

/** Slack's limits (Block Kit reference): a section's text, a message's blocks, a modal's plain-text input. */
export const SLACK_SECTION_MAX = 3000;
export const SLACK_BLOCKS_MAX = 50;
export const SLACK_INPUT_MAX = 3000;

export type TSlackBlock = Record<string, unknown>;
export type TSlackMessage = { text: string; blocks?: TSlackBlock[] };

/** How an approval ended, for the message that announced it (chat.update). */
export type TSlackOutcome = {
  status: "approved" | "denied" | "expired" | "cancelled";
  /** "Name (email)" of who decided or cancelled; null for the system (expiry). */
  by: string | null;
  via: string | null;
  at: string | null;
  /** The approver's reply (a denial with a message the agent receives). */
  reply: string | null;
};

/** Text for Slack's mrkdwn: `&`, `<` and `>` escaped as Slack documents, so no mention, `<!channel>` or link can be formed. */
export const slackEscape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Escaped for a ``` block, where a run of three backticks could end the block: it is broken by zero-width spaces. */
const fenceSafe = (text: string): string => slackEscape(text).replace(/`(?=``)/g, "`\u200b");

/** A name in bold, unless it holds mrkdwn's own marks (then plain, escaped). */
const label = (text: string): string => (/[*~`]/.test(text) ? slackEscape(text) : `*${slackEscape(text)}*`);

/** A short value as inline code; one holding a backtick or a line break as plain escaped text. */
const inline = (text: string): string => (/[`\n]/.test(text) ? slackEscape(text) : `\`${slackEscape(text)}\``);

/** Each line as a quote: the requester's text can not pass for a line of ours. */
const quote = (text: string): string =>
  text
    .split("\n")
    .map((line) => `>${slackEscape(line)}`)
    .join("\n");

const mrkdwn = (text: string) => ({ type: "mrkdwn", text });
const plain = (text: string) => ({ type: "plain_text", text });
const section = (text: string): TSlackBlock => ({ type: "section", text: mrkdwn(text) });
/** Our own link: our URL and our label only. */
const link = (url: string, text: string) => `<${url}|${text}>`;

/** The longest start of `text` whose fence-safe form fits in `budget` characters. */
function fittingStart(text: string, budget: number): string {
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fenceSafe(text.slice(0, mid)).length <= budget) lo = mid;
    else hi = mid - 1;
  }
  // Never half of a surrogate pair.
  const start = text.slice(0, lo);
  return /[\uD800-\uDBFF]$/.test(start) ? start.slice(0, -1) : start;
}

/** One argument as a section: its name, and its value (a command, content, a diff, a number) in a ``` block, cut to Slack's section limit. */
function partBlock(part: TOperationPart): { block: TSlackBlock; cut: boolean } {
  const name = label(part.label);
  const open = `${name}\n\`\`\`\n`;
  const close = "\n```";
  const body = fenceSafe(part.text);
  if (open.length + body.length + close.length <= SLACK_SECTION_MAX) return { block: section(`${open}${body}${close}`), cut: false };
  const note = "\n_Cut here: too long for one Slack section._";
  const start = fittingStart(part.text, SLACK_SECTION_MAX - open.length - close.length - note.length - 40);
  const rest = `… [${part.text.length - start.length} more characters]`;
  return { block: section(`${open}${fenceSafe(start)}${rest}${close}${note}`), cut: true };
}

/** The blocks of the arguments, and whether Slack's limits cut anything beyond what the payload already cut. */
export function operationBlocks(operation: TShownOperation, room: number): { blocks: TSlackBlock[]; cut: boolean } {
  const blocks: TSlackBlock[] = [];
  let cut = !operation.complete;
  for (const part of operation.parts) {
    if (blocks.length >= room) {
      cut = true;
      break;
    }
    const shown = partBlock(part);
    blocks.push(shown.block);
    if (shown.cut) cut = true;
  }
  return { blocks, cut };
}

/** Blocks every approval message has besides its arguments (outcome, header, message, facts, reviewer, cut notice, context, actions). */
const OWN_BLOCKS = 8;

/** Whether Slack shows all of an approval's arguments: only then does its message offer Approve. */
export function slackShowsAll(view: TApprovalView): boolean {
  return !operationBlocks(operationOf(view), SLACK_BLOCKS_MAX - OWN_BLOCKS).cut;
}

const VIA_WORDS: Record<string, string> = { console: "the console", http: "the HTTP API", websocket: "WebSocket", link: "a notification link", slack: "Slack", system: "the system" };

/** "via the console", "via Slack", …: the transport as people say it. */
export const viaWords = (via: string | null | undefined): string => (via ? (VIA_WORDS[via] ?? via) : "");

/** One sentence of how an approval ended (plain text; names escaped by the caller where needed). */
export function outcomeSentence(outcome: TSlackOutcome): string {
  const by = outcome.by ? ` by ${outcome.by}` : "";
  const via = outcome.via && outcome.status !== "expired" ? ` via ${viaWords(outcome.via)}` : "";
  const at = outcome.at ? ` at ${outcome.at}` : "";
  if (outcome.status === "expired") return `Expired${at}: nobody decided in time; it was not run.`;
  if (outcome.status === "cancelled") return `Cancelled${by}${via}${at}: the run was cancelled; it was not run.`;
  if (outcome.status === "approved") return `Approved${by}${via}${at}.`;
  if (outcome.reply !== null) return `Denied with a reply${by}${via}${at}; the agent received the reply and goes on.`;
  return `Denied${by}${via}${at}; it was not run.`;
}

/** The outcome as a section: the sentence, and a reply as a quote (cut to fit one section). */
function outcomeBlock(outcome: TSlackOutcome): TSlackBlock {
  const sentence = `*${slackEscape(outcomeSentence(outcome))}*`;
  if (outcome.reply === null) return section(sentence);
  const reply = outcome.reply.length > 2000 ? `${outcome.reply.slice(0, 2000)}… [${outcome.reply.length - 2000} more characters]` : outcome.reply;
  return section(`${sentence}\n${quote(reply)}`);
}

const EVENT_WORDS: Record<TNotificationPayload["event"], string> = { requested: "", reminder: "Reminder: ", escalation: "Escalated: " };

function approvalBlocks(payload: TNotificationPayload, view: TApprovalView, options: { buttons: boolean; outcome?: TSlackOutcome }): { blocks: TSlackBlock[]; approvable: boolean } {
  const console = payload.links.console;
  const operation = operationOf(view);
  const args = operationBlocks(operation, SLACK_BLOCKS_MAX - OWN_BLOCKS);
  const facts = [
    `*Action:* ${inline(view.action)} (tool ${inline(view.tool)})`,
    `*Risk:* ${slackEscape(view.risk)}`,
    ...(view.agent ? [`*Agent:* ${inline(view.agent)}`] : []),
    ...(view.requester ? [`*Requested by:* ${slackEscape(view.requester)}`] : []),
    `*Expires:* ${slackEscape(view.expiresAt)}`,
  ];
  const blocks: TSlackBlock[] = [];
  if (options.outcome) blocks.push(outcomeBlock(options.outcome));
  blocks.push(
    { type: "header", text: plain(`${EVENT_WORDS[payload.event]}Approval needed, ${view.risk} risk`.slice(0, 150)) },
    section(`*Message from the requester:*\n${quote(view.message)}`.slice(0, SLACK_SECTION_MAX)),
    { type: "section", fields: facts.map((f) => mrkdwn(f.slice(0, 2000))) },
    section(`*Reviewer:* ${slackEscape(reviewSentence(view.review))}`.slice(0, SLACK_SECTION_MAX)),
    ...args.blocks,
  );
  if (args.cut) {
    const notice = options.outcome ? `:warning: ${CUT_SENTENCE}` : `:warning: *${CUT_SENTENCE}* It cannot be approved from Slack: open it in Countersign.`;
    blocks.push(section(`${notice} ${link(console, "Open in Countersign")}`));
  }
  blocks.push({ type: "context", elements: [mrkdwn(`${link(console, "Review and decide in Countersign")} (sign-in required) · ${inline(view.id)}`)] });
  const approvable = !args.cut;
  if (options.buttons && !options.outcome && payload.bindingHash) {
    const value = JSON.stringify({ approvalId: view.id, bindingHash: payload.bindingHash } satisfies TSlackButtonValue);
    blocks.push({
      type: "actions",
      block_id: "countersign_decide",
      elements: [
        // Approve only when the message shows everything that would be approved.
        ...(approvable ? [{ type: "button", action_id: SLACK_ACTIONS.approve, style: "primary", text: plain("Approve"), value }] : []),
        { type: "button", action_id: SLACK_ACTIONS.deny, style: "danger", text: plain("Deny"), value },
        { type: "button", action_id: SLACK_ACTIONS.reply, text: plain("Reply"), value },
        { type: "button", action_id: SLACK_ACTIONS.open, text: plain("Open in Countersign"), url: console },
      ],
    });
  }
  return { blocks, approvable };
}

/**
 * A Slack message. An approval shows its action, every argument (a code block each, a coding
 * tool's input rendered as in the console), the risk, the requester, the requester's message and
 * the reviewer's verdict; on an interactive channel Approve / Deny / Reply buttons and a link
 * button to the console, Approve only when nothing was cut. With `outcome`, the same message
 * without buttons and with how it ended on top (chat.update). A question: its texts and the link.
 */
export function slackMessage(payload: TNotificationPayload, options: { buttons?: boolean; outcome?: TSlackOutcome } = {}): TSlackMessage {
  const s = payload.subject;
  const verb = s.kind === "approval" ? "Review and decide" : "Answer";
  const first = options.outcome ? `${outcomeSentence(options.outcome)} ` : "";
  const text = `${slackEscape(`${first}${headline(payload)}`)}\n${link(payload.links.console, `${verb} in Countersign`)} (sign-in required)`;
  if (s.kind !== "approval") {
    const lines = [text];
    for (const q of s.questions) if (q.options.length) lines.push(`${slackEscape(q.header)}: ${slackEscape(q.options.join(" | "))}`);
    return { text: lines.join("\n") };
  }
  return { text, blocks: approvalBlocks(payload, s, { buttons: Boolean(options.buttons), ...(options.outcome ? { outcome: options.outcome } : {}) }).blocks };
}

/** What the reply form carries through Slack and back: the approval, the binding shown, where the message is. */
export type TReplyMetadata = { approvalId: string; bindingHash: string; responseUrl: string | null };

/** The reply form: a modal with one multi-line field; its submission arrives at the same interactions route. */
export function replyModal(metadata: TReplyMetadata, about: string): Record<string, unknown> {
  return {
    type: "modal",
    callback_id: SLACK_ACTIONS.replyView,
    private_metadata: JSON.stringify(metadata),
    title: plain("Reply instead"),
    submit: plain("Send reply"),
    close: plain("Cancel"),
    blocks: [
      section(`${slackEscape(about)}\nThe agent receives your reply instead of running the operation, and goes on.`.slice(0, SLACK_SECTION_MAX)),
      {
        type: "input",
        block_id: SLACK_ACTIONS.replyBlock,
        label: plain("Your reply"),
        element: { type: "plain_text_input", action_id: SLACK_ACTIONS.replyText, multiline: true, max_length: SLACK_INPUT_MAX },
      },
    ],
  };
}
