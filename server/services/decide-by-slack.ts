import { z } from "zod";
import { approvalSettlement, approvalWithAgent } from "../../db/repositories/approvals";
import { userIdByEmailIgnoringCase } from "../../db/repositories/users";
import { actorOf } from "../auth/users";
import type { TActor } from "../core/actor";
import { DomainError } from "../core/errors";
import { personLabel } from "../core/person";
import type { TRunDeps } from "../host/deps";
import { callSlackApi } from "../notify/channels";
import type { TSlackApp } from "../notify/config";
import { approvalView } from "../notify/render";
import { replyModal, SLACK_ACTIONS, slackShowsAll, type TReplyMetadata, viaWords } from "../notify/slack-render";
import { decideApproval } from "./decide-approval";

const ZSlackUser = z.object({ id: z.string().min(1).max(64) });

/** The parts of a Slack `block_actions` payload we use (Slack sends much more). */
export const ZSlackBlockActions = z.object({
  type: z.literal("block_actions"),
  user: ZSlackUser,
  response_url: z.url({ protocol: /^https?$/ }),
  /** Lets the app open a modal within 3 seconds of the click (the Reply button). */
  trigger_id: z.string().min(1).max(200).optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().max(2000).optional() })).min(1),
});
export type TSlackBlockActions = z.infer<typeof ZSlackBlockActions>;

/** The parts of a Slack `view_submission` payload we use: who submitted which form, with what. */
export const ZSlackViewSubmission = z.object({
  type: z.literal("view_submission"),
  user: ZSlackUser,
  view: z.object({
    callback_id: z.string().max(255),
    private_metadata: z.string().max(3000),
    state: z.object({ values: z.record(z.string(), z.record(z.string(), z.object({ value: z.string().nullish() }).loose())) }),
  }),
});
export type TSlackViewSubmission = z.infer<typeof ZSlackViewSubmission>;

const ZButtonValue = z.strictObject({ approvalId: z.string().min(1).max(200), bindingHash: z.string().min(1).max(200) });
const ZReplyMetadata = ZButtonValue.extend({ responseUrl: z.url({ protocol: /^https?$/ }).nullable() });

/**
 * What to tell Slack after a click: replace the message with the outcome, or an ephemeral note to
 * the clicker only; `post: false` when there is nothing to post (a link button, a form opened).
 */
export type TSlackReply = { replaceOriginal: boolean; text: string; post: boolean };

/** The answer to a submitted reply form: close it (and post the outcome to the message), or show why not in its field. */
export type TSlackViewAnswer = { close: true; responseUrl: string | null; reply: TSlackReply } | { close: false; errors: Record<string, string>; responseUrl: string | null; reply: TSlackReply | null };

const note = (text: string): TSlackReply => ({ replaceOriginal: false, text, post: true });
const replace = (text: string): TSlackReply => ({ replaceOriginal: true, text, post: true });

/** The clicking Slack user's email, from `users.info` with the app's bot token; null when Slack does not give one. */
async function slackEmail(app: TSlackApp, slackUserId: string): Promise<string | null> {
  try {
    const res = await fetch(`${app.apiUrl.replace(/\/+$/, "")}/users.info?user=${encodeURIComponent(slackUserId)}`, {
      headers: { authorization: `Bearer ${app.botToken}` },
      redirect: "manual",
      signal: AbortSignal.timeout(2500),
    });
    const body = (await res.json()) as { ok?: boolean; user?: { profile?: { email?: unknown } } };
    const email = body.ok ? body.user?.profile?.email : undefined;
    return typeof email === "string" && email.includes("@") ? email.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** The Countersign user the Slack user maps to (by the email Slack gives), or the sentence saying why none. */
async function slackActor(deps: TRunDeps, app: TSlackApp, slackUserId: string): Promise<{ actor: TActor } | { refusal: string }> {
  const email = await slackEmail(app, slackUserId);
  const userId = email ? await userIdByEmailIgnoringCase(deps.db, email) : null;
  const actor = userId ? await actorOf(deps.db, userId) : null;
  if (actor) return { actor };
  const who = email ? `Your Slack email (${email}) is not an active Countersign user` : "Slack did not tell us your email address, so you cannot be matched to a Countersign user";
  return { refusal: `${who}; nothing was decided. Ask an admin to add you, or decide in the Countersign console.` };
}

/** "Already approved by Ada (ada@example.com) via the console at …": who settled an approval that someone acts on again. */
async function settledText(deps: TRunDeps, approvalId: string): Promise<string | null> {
  const row = await approvalSettlement(deps.db, approvalId);
  if (!row || row.status === "pending") return null;
  const by = row.name || row.email ? ` by ${personLabel(row)}` : "";
  const via = row.decidedVia ? ` via ${viaWords(row.decidedVia)}` : "";
  const at = row.decidedAt ? ` at ${row.decidedAt.toISOString()}` : "";
  return `Already ${row.status}${by}${via}${at}. Your click changed nothing.`;
}

const parseValue = (value: string | undefined): z.infer<typeof ZButtonValue> | null => {
  try {
    return ZButtonValue.parse(JSON.parse(value ?? ""));
  } catch {
    return null;
  }
};

/** Decides as `actor` through the one decide service; whether this settled it, and the texts Slack shows for every outcome. */
async function decideAs(deps: TRunDeps, actor: TActor, value: z.infer<typeof ZButtonValue>, decision: "approve" | "deny", message?: string): Promise<{ settled: boolean; reply: TSlackReply }> {
  const who = personLabel({ name: actor.name, email: actor.email ?? null });
  try {
    const decided = await decideApproval(deps, actor, { approvalId: value.approvalId, decision, via: "slack", expectedBindingHash: value.bindingHash, ...(message ? { message } : {}) });
    if (!decided.settled) return { settled: false, reply: note(`Your approval is recorded: ${decided.approvals} of ${decided.requiredApprovals} approvals from different people; the run still waits.`) };
    const what = message ? `Denied with a reply by ${who} via Slack: "${message}". The agent received it and goes on.` : decision === "approve" ? `Approved by ${who} via Slack; the agent goes on.` : `Denied by ${who} via Slack; it was not run.`;
    return { settled: true, reply: replace(`${what} (${deps.now().toISOString()})`) };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (error.code === "already_decided" || error.code === "expired" || error.code === "conflict") {
      const settled = await settledText(deps, value.approvalId);
      if (settled) return { settled: false, reply: replace(settled) };
    }
    return { settled: false, reply: note(`${error.message} Nothing was decided.`) };
  }
}

/** The approval a button names, with what its Slack message shows; null when it does not exist. */
async function approvalShown(deps: TRunDeps, approvalId: string) {
  const found = await approvalWithAgent(deps.db, approvalId);
  return found ? { row: found.approval, view: approvalView({ ...found.approval, agent: found.agent }) } : null;
}

const NOT_ALL_SHOWN = "Not all of this approval's arguments are shown in full in a Slack message (too long, or secret-looking values hidden), so it cannot be approved from Slack; nothing was decided. Open it in Countersign to see everything and decide there.";

/** The Reply button: opens the reply form (`views.open`) unless the approval is settled already. */
async function openReplyForm(deps: TRunDeps, app: TSlackApp, payload: TSlackBlockActions, value: z.infer<typeof ZButtonValue>): Promise<TSlackReply> {
  const settled = await settledText(deps, value.approvalId);
  if (settled) return replace(settled);
  const shown = await approvalShown(deps, value.approvalId);
  if (!shown) return note("This approval does not exist; nothing was decided.");
  if (!payload.trigger_id) return note("Slack sent no trigger_id, so the reply form cannot be opened; nothing was decided. Reply in the Countersign console.");
  const metadata: TReplyMetadata = { approvalId: value.approvalId, bindingHash: value.bindingHash, responseUrl: payload.response_url };
  const opened = await callSlackApi(app, "views.open", { trigger_id: payload.trigger_id, view: replyModal(metadata, `Reply instead of running ${shown.row.action} (${shown.row.id}).`) }, 2500);
  if (!opened.ok) return note(`Slack did not open the reply form (${opened.error}); nothing was decided. Reply in the Countersign console.`);
  return { replaceOriginal: false, text: "The reply form is open.", post: false };
}

/**
 * A click on a Countersign button in Slack, as the Slack user's Countersign account (matched by
 * email), through the one decide service: the console's rules (separation of duties, quorum,
 * binding, exactly once) apply unchanged. Approve is refused when the message could not show all
 * arguments; Reply opens the reply form; the link button changes nothing. Returns what to show.
 */
export async function decideBySlack(deps: TRunDeps, app: TSlackApp, payload: TSlackBlockActions): Promise<TSlackReply> {
  const action = payload.actions[0];
  const kind = action?.action_id;
  if (kind === SLACK_ACTIONS.open) return { replaceOriginal: false, text: "", post: false };
  if (!action || (kind !== SLACK_ACTIONS.approve && kind !== SLACK_ACTIONS.deny && kind !== SLACK_ACTIONS.reply)) {
    return note("This button is not one of Countersign's; nothing was decided.");
  }
  const value = parseValue(action.value);
  if (!value) return note("This button does not name an approval; nothing was decided.");
  if (kind === SLACK_ACTIONS.reply) return openReplyForm(deps, app, payload, value);
  const found = await slackActor(deps, app, payload.user.id);
  if ("refusal" in found) return note(found.refusal);
  if (kind === SLACK_ACTIONS.approve) {
    // Never approve what the message could not show in full (a message rendered before the cut rule, or a crafted click).
    const shown = await approvalShown(deps, value.approvalId);
    if (shown && shown.row.status === "pending" && !slackShowsAll(shown.view)) return note(NOT_ALL_SHOWN);
  }
  return (await decideAs(deps, found.actor, value, kind === SLACK_ACTIONS.approve ? "approve" : "deny")).reply;
}

/**
 * A submitted reply form: decides "deny with this reply" as the submitting Slack user. An empty
 * reply, an unknown user or a refusal is shown in the form's field (it stays open, nothing
 * changes); a reply that settles closes it and the outcome replaces the message.
 */
export async function replyBySlack(deps: TRunDeps, app: TSlackApp, payload: TSlackViewSubmission): Promise<TSlackViewAnswer> {
  const field = SLACK_ACTIONS.replyBlock;
  const refuse = (text: string, responseUrl: string | null = null, reply: TSlackReply | null = null): TSlackViewAnswer => ({ close: false, errors: { [field]: text }, responseUrl, reply });
  let metadata: z.infer<typeof ZReplyMetadata>;
  try {
    metadata = ZReplyMetadata.parse(JSON.parse(payload.view.private_metadata));
  } catch {
    return refuse("This form does not name an approval; nothing was decided.");
  }
  const message = payload.view.state.values[field]?.[SLACK_ACTIONS.replyText]?.value?.trim() ?? "";
  if (!message) return refuse("Type your reply (the agent receives it and goes on), or cancel.");
  const found = await slackActor(deps, app, payload.user.id);
  if ("refusal" in found) return refuse(found.refusal);
  const { settled, reply } = await decideAs(deps, found.actor, metadata, "deny", message);
  if (settled) return { close: true, responseUrl: metadata.responseUrl, reply };
  // Settled before (the message then shows by whom) or refused: the form says why and stays open.
  return refuse(reply.text, metadata.responseUrl, reply.replaceOriginal ? reply : null);
}
