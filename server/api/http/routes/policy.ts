import { z } from "zod";
import { DomainError } from "../../../core/errors";
import { simulatePolicy, ZSimulation, ZSimulationInput } from "../../../services/policy-simulation";
import { applySuggestion, dismissSuggestion, listSuggestions, ZSuggestion, ZSuggestionWindow } from "../../../services/policy-suggestions";
import { clientAddress, NO_TRUSTED_PROXIES } from "../../shared/client-address";
import { sendJson } from "../../shared/respond";
import { defineRoute, jsonBody, type TAuthedCtx } from "../route";

/** The window of a query string (`?days=`, default 14): a clear 400 otherwise. */
function windowOf(url: URL): number {
  const raw = url.searchParams.get("days");
  const parsed = ZSuggestionWindow.safeParse(raw === null || raw === "" ? {} : { days: Number(raw) });
  if (!parsed.success) throw new DomainError("invalid_request", `days: ${parsed.error.issues[0]?.message ?? "invalid"}.`);
  return parsed.data.days;
}

const ZSuggestionList = z.object({ suggestions: z.array(ZSuggestion) });
const ZApplied = z.object({ applied: ZSuggestion, backup: z.string().describe("Where the previous agents file was kept"), reload: z.unknown().describe("The configuration reload's answer") });

async function list({ deps, res, url, actor }: TAuthedCtx): Promise<void> {
  sendJson(res, 200, { suggestions: await listSuggestions(deps, actor, windowOf(url)) } satisfies z.input<typeof ZSuggestionList>);
}

export const listSuggestionsRoute = defineRoute({
  method: "GET",
  path: "/v1/policy/suggestions",
  auth: true,
  docs: {
    operationId: "listPolicySuggestions",
    summary: "Changes to the agents file proposed from what people decided in a window (operators, auditors, admins)",
    params: [{ in: "query", name: "days", schema: z.string(), description: "The window in days, 1–365 (default 14)" }],
    responses: { 200: { description: "The suggestions, each with its evidence and diff", json: ZSuggestionList } },
    errors: [400, 403, 409],
  },
  handle: list,
});

const whoOf = (ctx: TAuthedCtx) => ({ actor: ctx.actor, origin: { channel: "v1" as const, clientIp: clientAddress(ctx.req, ctx.deps.trustedProxies ?? NO_TRUSTED_PROXIES) } });

export const applySuggestionRoute = defineRoute({
  method: "POST",
  path: "/v1/policy/suggestions/{id}/apply",
  auth: true,
  body: jsonBody(ZSuggestionWindow, { optional: true }),
  docs: {
    operationId: "applyPolicySuggestion",
    summary: "Apply a suggestion to the agents file (admins): rewritten atomically, the previous file kept beside it, the configuration reloaded",
    description: "`days` must be the window the suggestion was listed for. 404: not a suggestion now; 409: the agents file changed since (or the suggestion was applied), or the installation has no agents file.",
    responses: { 200: { description: "Applied", json: ZApplied } },
    errors: [400, 403, 404, 409],
  },
  handle: async (ctx) => sendJson(ctx.res, 200, (await applySuggestion(ctx.deps, whoOf(ctx), ctx.params.id, ctx.body.days)) satisfies z.input<typeof ZApplied>),
});

export const dismissSuggestionRoute = defineRoute({
  method: "POST",
  path: "/v1/policy/suggestions/{id}/dismiss",
  auth: true,
  body: jsonBody(ZSuggestionWindow, { optional: true }),
  docs: {
    operationId: "dismissPolicySuggestion",
    summary: "Dismiss a suggestion (admins): not proposed again from a window of this length",
    responses: { 200: { description: "Dismissed", json: z.object({ dismissed: z.string() }) } },
    errors: [400, 403, 404, 409],
  },
  handle: async (ctx) => sendJson(ctx.res, 200, await dismissSuggestion(ctx.deps, whoOf(ctx), ctx.params.id, ctx.body.days)),
});

export const simulatePolicyRoute = defineRoute({
  method: "POST",
  path: "/v1/policy/simulate",
  auth: true,
  body: jsonBody(ZSimulationInput),
  docs: {
    operationId: "simulatePolicy",
    summary: "Replay the window's recorded requests through a candidate agents file (operators, auditors, admins): what would be settled without a person, what would ask one",
    description: "Nothing changes but an admin-trail row of who simulated what. 422: the candidate file is not valid (every bad field named).",
    responses: { 200: { description: "The replay, per agent and action", json: ZSimulation } },
    errors: [400, 403, 422],
  },
  handle: async (ctx) => sendJson(ctx.res, 200, (await simulatePolicy(ctx.deps, whoOf(ctx), ctx.body)) satisfies z.input<typeof ZSimulation>),
});
