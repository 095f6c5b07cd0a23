import type { z } from "zod";
import { submitClientToolResult } from "../../../services/submit-client-tool-result";
import { waitForBoundary } from "../../../services/wait-for-boundary";
import { sendJson } from "../../shared/respond";
import { defineRoute, jsonBody, type TAuthedCtx } from "../route";
import { ZClientToolBody, ZClientToolSubmitted } from "../v1-schemas";

/** Submits a client tool's output; answers with the run's next envelope. */
async function submitResult({ deps, res, params, actor, body }: TAuthedCtx<"id", typeof ZClientToolBody>): Promise<void> {
  const submitted = await submitClientToolResult(deps, actor, { requestId: params.id, output: body.output, via: "http" });
  const envelope = await waitForBoundary(deps, submitted.responseId, submitted.resultSequence);
  sendJson(res, 200, { ...envelope, clientToolId: submitted.clientToolId } satisfies z.input<typeof ZClientToolSubmitted>);
}

export const submitClientToolResultRoute = defineRoute({
  method: "POST",
  path: "/v1/client-tools/{id}",
  auth: true,
  body: jsonBody(ZClientToolBody),
  docs: {
    operationId: "submitClientToolResult",
    summary: "Submit a client tool's output",
    responses: { 200: { description: "The run's next envelope", json: ZClientToolSubmitted } },
    errors: [403, 404, 409, 422, 504],
  },
  handle: submitResult,
});
