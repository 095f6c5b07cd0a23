import { z } from "zod";
import { DomainError } from "../../../core/errors";
import { listGrants, revokeGrant, ZGrantRecord } from "../../../services/grants";
import { clientAddress, NO_TRUSTED_PROXIES } from "../../shared/client-address";
import { sendJson } from "../../shared/respond";
import { defineRoute, type TAuthedCtx } from "../route";
import { ZGrantList } from "../v1-schemas";

/** The standing grants the caller may see: `active` (default) or `all`, newest first. */
async function listCallerGrants({ deps, res, url, actor }: TAuthedCtx): Promise<void> {
  const status = url.searchParams.get("status") ?? "active";
  if (status !== "active" && status !== "all") throw new DomainError("invalid_request", 'status must be "active" or "all".');
  sendJson(res, 200, { grants: await listGrants(deps, actor, { status }) } satisfies z.input<typeof ZGrantList>);
}

export const listGrantsRoute = defineRoute({
  method: "GET",
  path: "/v1/grants",
  auth: true,
  docs: {
    operationId: "listGrants",
    summary: "Standing grants the caller may see, newest first",
    params: [{ in: "query", name: "status", schema: z.enum(["active", "all"]), description: "`active` (default) or `all`" }],
    responses: { 200: { description: "The grants", json: ZGrantList } },
    errors: [400],
  },
  handle: listCallerGrants,
});

/** Revokes a standing grant (recorded in the admin trail with the client's address). */
async function revoke({ deps, req, res, params, actor }: TAuthedCtx<"id">): Promise<void> {
  const origin = { channel: "v1" as const, clientIp: clientAddress(req, deps.trustedProxies ?? NO_TRUSTED_PROXIES) };
  sendJson(res, 200, (await revokeGrant(deps, { actor, origin }, params.id)) satisfies z.input<typeof ZGrantRecord>);
}

export const revokeGrantRoute = defineRoute({
  method: "DELETE",
  path: "/v1/grants/{id}",
  auth: true,
  docs: { operationId: "revokeGrant", summary: "Revoke a standing grant", responses: { 200: { description: "The revoked grant", json: ZGrantRecord } }, errors: [403, 404, 409] },
  handle: revoke,
});
