import { z } from "zod";
import { GATEWAY_METHODS, handleGateway, ZGatewayError } from "../gateway";
import { defineRoute, type TAuthedCtx } from "../route";

/** `POST /v1/gateway/{method}`: one Gateway question method (params as the JSON body, validated by the method). */
async function callGatewayMethod({ deps, req, res, params, actor }: TAuthedCtx<"method">): Promise<void> {
  await handleGateway(deps, req, res, actor, params.method);
}

export const gatewayRoute = defineRoute({
  method: "POST",
  path: "/v1/gateway/{method}",
  auth: true,
  // One documented operation per method (each validates its own params and answers `{ok, …}`).
  docs: Object.entries(GATEWAY_METHODS).map(([name, m]) => ({
    operationId: name.replace(/\.(.)/, (_, c: string) => c.toUpperCase()),
    summary: m.summary,
    path: `/v1/gateway/${name}`,
    description: "A Gateway question method. An unknown method is 404 `{detail, code}`.",
    body: m.schema,
    responses: {
      200: { description: "`{ok: true, payload}`", json: z.object({ ok: z.literal(true), payload: m.payload }) },
      400: { description: "Invalid params or a refused request (reason in `details.reason`)", json: ZGatewayError },
      503: { description: "The question store is unavailable", json: ZGatewayError },
    },
    errors: [404],
  })),
  handle: callGatewayMethod,
});
