import type { IncomingMessage, ServerResponse } from "node:http";
import { DomainError } from "../../core/errors";
import { verifySlackRequest } from "../../notify/slack-verify";
import { SLACK_ACTIONS, slackEscape } from "../../notify/slack-render";
import { decideBySlack, replyBySlack, type TSlackReply, ZSlackBlockActions, ZSlackViewSubmission } from "../../services/decide-by-slack";
import { readBodyText } from "../shared/request-body";
import type { TTransportDeps } from "../shared/deps";
import { sendJson } from "../shared/respond";

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Tells Slack the outcome through an interaction's `response_url` (the message, or an ephemeral
 * note), as mrkdwn with everything escaped: names and replies are people's text.
 */
async function respond(deps: TTransportDeps, responseUrl: string, reply: TSlackReply): Promise<void> {
  const text = slackEscape(reply.text);
  const body = reply.replaceOriginal ? { replace_original: true, text } : { response_type: "ephemeral", replace_original: false, text };
  try {
    const res = await fetch(responseUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), redirect: "manual", signal: AbortSignal.timeout(2500) });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) deps.log.warn({ status: res.status }, "Slack response_url refused the outcome message");
  } catch (error) {
    deps.log.warn({ err: error }, "could not post the outcome to Slack's response_url");
  }
}

/**
 * `POST /v1/slack/interactions`: a click on a Countersign button in Slack (`block_actions`) or a
 * submitted reply form (`view_submission`). The raw form body is verified against the signing
 * secrets of the interactive Slack channels (401 with the reason otherwise, nothing parsed), then
 * decided through the one decide service. A click is answered 200 with the outcome's text, which
 * is then posted to `response_url`; a form is answered as Slack's API expects: an empty 200 closes
 * it, `{"response_action":"errors","errors":{…}}` keeps it open with the reason in its field.
 */
export async function handleSlackInteraction(deps: TTransportDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const apps = Object.values(deps.notify?.config.slackApps ?? {});
  if (apps.length === 0) {
    req.resume();
    throw new DomainError("not_found", "Slack interactions are off: no Slack channel of the notification config has a signing secret.");
  }
  const raw = await readBodyText(req);
  const check = verifySlackRequest(
    apps.map((a) => a.signingSecret),
    { signature: header(req, "x-slack-signature"), timestamp: header(req, "x-slack-request-timestamp") },
    raw,
    deps.now(),
  );
  if (!check.ok) throw new DomainError("unauthenticated", check.reason);
  const app = apps[check.index] as (typeof apps)[number];
  let parsed: unknown;
  try {
    parsed = JSON.parse(new URLSearchParams(raw).get("payload") ?? "");
  } catch {
    throw new DomainError("invalid_request", "Send the interaction as Slack does: a form field `payload` holding JSON.");
  }
  const type = (parsed as { type?: unknown } | null)?.type;
  if (type === "view_submission") {
    const payload = ZSlackViewSubmission.safeParse(parsed);
    if (!payload.success) throw new DomainError("invalid_request", "The view_submission payload lacks its user or view (callback_id, private_metadata, state).");
    if (payload.data.view.callback_id !== SLACK_ACTIONS.replyView) {
      // Not our form: closed, nothing decided.
      res.writeHead(200).end();
      return;
    }
    const answer = await replyBySlack(deps, app, payload.data);
    if (answer.close) res.writeHead(200).end();
    else sendJson(res, 200, { response_action: "errors", errors: answer.errors });
    if (answer.responseUrl && answer.reply) void respond(deps, answer.responseUrl, answer.reply);
    return;
  }
  if (type !== "block_actions") {
    // Other interaction kinds (shortcuts, closed views) are acknowledged and ignored.
    sendJson(res, 200, { text: `Countersign ignores "${String(type)}" interactions.`, replacedMessage: false });
    return;
  }
  const payload = ZSlackBlockActions.safeParse(parsed);
  if (!payload.success) throw new DomainError("invalid_request", "The block_actions payload lacks its user, actions or response_url.");
  const reply = await decideBySlack(deps, app, payload.data);
  // Slack wants its answer within 3 seconds: acknowledge first, then update the message.
  sendJson(res, 200, { text: reply.text, replacedMessage: reply.replaceOriginal });
  if (reply.post) void respond(deps, payload.data.response_url, reply);
}
