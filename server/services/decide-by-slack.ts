import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import { approvals, users } from "../../db/schema";
import { actorOf } from "../auth/users";
import { DomainError } from "../core/errors";
import type { TRunDeps } from "../host/deps";
import type { TSlackApp } from "../notify/config";
import { SLACK_ACTIONS } from "../notify/render";
import { decideApproval } from "./decide-approval";

/** The parts of a Slack `block_actions` payload we use (Slack sends much more). */
export const ZSlackBlockActions = z.object({
  type: z.literal("block_actions"),
  user: z.object({ id: z.string().min(1).max(64) }),
  response_url: z.url({ protocol: /^https?$/ }),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().max(2000).optional() })).min(1),
  state: z.object({ values: z.record(z.string(), z.record(z.string(), z.object({ value: z.string().nullish() }).loose())) }).optional(),
});
export type TSlackBlockActions = z.infer<typeof ZSlackBlockActions>;

const ZButtonValue = z.strictObject({ approvalId: z.string().min(1).max(200), bindingHash: z.string().min(1).max(200) });

/** What to tell Slack: replace the message with the outcome, or an ephemeral note to the clicker only. */
export type TSlackReply = { replaceOriginal: boolean; text: string };

const VIA_WORDS: Record<string, string> = { console: "the console", http: "the HTTP API", websocket: "WebSocket", link: "a notification link", slack: "Slack", system: "the system" };

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

/** "Already approved by Ada via the console at …": who settled an approval that someone clicks again. */
async function settledText(deps: TRunDeps, approvalId: string): Promise<string | null> {
  const [row] = await deps.db
    .select({ status: approvals.status, decidedAt: approvals.decidedAt, decidedVia: approvals.decidedVia, name: users.name })
    .from(approvals)
    .leftJoin(users, eq(users.id, approvals.decidedBy))
    .where(eq(approvals.id, approvalId));
  if (!row || row.status === "pending") return null;
  const by = row.name ? ` by ${row.name}` : "";
  const via = row.decidedVia ? ` via ${VIA_WORDS[row.decidedVia] ?? row.decidedVia}` : "";
  const at = row.decidedAt ? ` at ${row.decidedAt.toISOString()}` : "";
  return `Already ${row.status}${by}${via}${at}. Your click changed nothing.`;
}

/**
 * Decides an approval from a Slack button, as the Slack user's Countersign account (matched by
 * email), through the one decide service: the console's rules (separation of duties, quorum,
 * binding, exactly once) apply unchanged. Returns what to show in Slack.
 */
export async function decideBySlack(deps: TRunDeps, app: TSlackApp, payload: TSlackBlockActions): Promise<TSlackReply> {
  const action = payload.actions[0];
  const kind = action?.action_id;
  if (!action || (kind !== SLACK_ACTIONS.approve && kind !== SLACK_ACTIONS.deny && kind !== SLACK_ACTIONS.reply)) {
    return { replaceOriginal: false, text: "This button is not one of Countersign's; nothing was decided." };
  }
  let value: z.infer<typeof ZButtonValue>;
  try {
    value = ZButtonValue.parse(JSON.parse(action.value ?? ""));
  } catch {
    return { replaceOriginal: false, text: "This button does not name an approval; nothing was decided." };
  }
  const email = await slackEmail(app, payload.user.id);
  const [user] = email ? await deps.db.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = ${email}`) : [];
  const actor = user ? await actorOf(deps.db, user.id) : null;
  if (!actor) {
    const who = email ? `Your Slack email (${email}) is not an active Countersign user` : "Slack did not tell us your email address, so you cannot be matched to a Countersign user";
    return { replaceOriginal: false, text: `${who}; nothing was decided. Ask an admin to add you, or decide in the Countersign console.` };
  }
  let message: string | undefined;
  if (kind === SLACK_ACTIONS.reply) {
    message = payload.state?.values[SLACK_ACTIONS.replyBlock]?.[SLACK_ACTIONS.replyText]?.value?.trim() || undefined;
    if (!message) return { replaceOriginal: false, text: "Type your reply in the field above the buttons first, then press Reply; nothing was decided." };
  }
  const decision = kind === SLACK_ACTIONS.approve ? "approve" : "deny";
  try {
    const decided = await decideApproval(deps, actor, { approvalId: value.approvalId, decision, via: "slack", expectedBindingHash: value.bindingHash, ...(message ? { message } : {}) });
    if (!decided.settled) return { replaceOriginal: false, text: `Your approval is recorded: ${decided.approvals} of ${decided.requiredApprovals} approvals from different people; the run still waits.` };
    const what = message ? `Denied with a reply by ${actor.name} via Slack: "${message}". The agent received it and goes on.` : decision === "approve" ? `Approved by ${actor.name} via Slack; the agent goes on.` : `Denied by ${actor.name} via Slack; it was not run.`;
    return { replaceOriginal: true, text: `${what} (${deps.now().toISOString()})` };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (error.code === "already_decided" || error.code === "expired" || error.code === "conflict") {
      const settled = await settledText(deps, value.approvalId);
      if (settled) return { replaceOriginal: true, text: settled };
    }
    return { replaceOriginal: false, text: `${error.message} Nothing was decided.` };
  }
}
