import { z } from "zod";
import { DomainError } from "../../../core/errors";
import { readScope } from "../../../core/read-scope";
import { decisionAnalytics, ZDecisionAnalytics, ZDecisionQuery } from "../../../services/read/analytics";
import { sendJson } from "../../shared/respond";
import { defineRoute, type TAuthedCtx } from "../route";

/** `GET /v1/analytics/decisions`: the figures of a period (docs/analytics.md); a member's own requests only. */
async function decisions({ deps, res, url, actor }: TAuthedCtx): Promise<void> {
  const parsed = ZDecisionQuery.safeParse(Object.fromEntries([...url.searchParams].filter(([, v]) => v !== "")));
  if (!parsed.success) throw new DomainError("invalid_request", `The analytics query is not valid: ${z.prettifyError(parsed.error)}`);
  sendJson(res, 200, (await decisionAnalytics(deps, readScope(actor), parsed.data)) satisfies z.input<typeof ZDecisionAnalytics>);
}

const QUERY_DOCS: Array<{ name: keyof z.infer<typeof ZDecisionQuery>; description: string }> = [
  { name: "from", description: "Start of the period, ISO 8601 with an offset (inclusive); default: 30 days before `to`" },
  { name: "to", description: "End of the period (exclusive); default: now. At most 365 days after `from`" },
  { name: "agent", description: "One agent" },
  { name: "action", description: "One action (`tool:exec`, `send_email`, …)" },
  { name: "approver", description: "Who decided: a user id or an email (only requests a person decided)" },
  { name: "outcome", description: "One outcome: approved, edited, denied, replied, expired, cancelled, policy, grant, reviewer" },
  { name: "timeZone", description: "Calendar days in this IANA zone (default UTC)" },
];

export const decisionAnalyticsRoute = defineRoute({
  method: "GET",
  path: "/v1/analytics/decisions",
  auth: true,
  docs: {
    operationId: "decisionAnalytics",
    summary: "Decision analytics of a period: requests per day by outcome, time to decide, the most repeated requests, expiries (members: their own requests)",
    params: QUERY_DOCS.map(({ name, description }) => ({ in: "query" as const, name, schema: z.string(), description })),
    responses: { 200: { description: "The figures", json: ZDecisionAnalytics } },
    errors: [400],
  },
  handle: decisions,
});
