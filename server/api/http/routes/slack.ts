import { z } from "zod";
import { handleSlackInteraction } from "../slack";
import { defineRoute, type TPublicCtx } from "../route";

/** What `POST /v1/slack/interactions` answers Slack for a click (its message text; the outcome itself goes to `response_url`). */
const ZSlackAnswer = z.object({ text: z.string(), replacedMessage: z.boolean() });
/** Slack's answer to a submitted form that stays open: the reason shown under the field (an empty 200 closes the form). */
const ZSlackViewErrors = z.object({ response_action: z.literal("errors"), errors: z.record(z.string(), z.string()) });

/** A click on a Slack message's button, or a submitted reply form, verified by Slack's signature. */
async function slackInteraction({ deps, req, res }: TPublicCtx): Promise<void> {
  await handleSlackInteraction(deps, req, res);
}

export const slackInteractionRoute = defineRoute({
  // Authenticated by Slack's request signature (the signing secret), not by an API key.
  method: "POST",
  path: "/v1/slack/interactions",
  auth: false,
  docs: {
    operationId: "slackInteraction",
    summary: "A click on a Slack message's Approve / Deny / Reply button, or a submitted reply form",
    description:
      "Sent by Slack, form-encoded (`payload=<JSON>`), signed with the channel's signing secret (`X-Slack-Signature`, `X-Slack-Request-Timestamp` within 5 minutes). The Slack user is mapped to a Countersign user by email and decides with the console's rules; the outcome replaces the message through its `response_url`. Reply opens a form (`views.open`); its `view_submission` is answered as Slack expects: an empty 200 closes it, `{\"response_action\":\"errors\",…}` keeps it open with the reason. 404 when no interactive Slack channel is configured.",
    responses: { 200: { description: "A click was taken (or ignored; `text` says what happened); a form was closed (empty body) or kept open with its errors", json: z.union([ZSlackAnswer, ZSlackViewErrors]) } },
    errors: [404],
  },
  handle: slackInteraction,
});
