import { readScope } from "../../../core/read-scope";
import { readResponseAttachment } from "../../../services/read/attachments";
import { defineRoute, type TAuthedCtx } from "../route";
import { sendFile } from "../send-file";
import { ZQueryId } from "../v1-schemas";

/** A file of a response (the agent's output or one the run was given), to those who may read the response. */
async function getResponseAttachment({ deps, res, url, params, actor }: TAuthedCtx<"id" | "attachmentId">): Promise<void> {
  const file = await readResponseAttachment(deps, readScope(actor), { responseId: params.id, attachmentId: params.attachmentId, sessionId: url.searchParams.get("sessionId") ?? undefined });
  sendFile(res, file);
}

export const getResponseAttachmentRoute = defineRoute({
  method: "GET",
  path: "/v1/responses/{id}/attachments/{attachmentId}",
  auth: true,
  docs: {
    operationId: "getResponseAttachment",
    summary: "Download a file of a response",
    description:
      "A file the agent attached to its answer (an `attachment` output item's `url`) or one the run was given. Answers only to those who may read the response. `Content-Type` is the file's media type, `X-Content-Type-Options: nosniff`; images are `inline`, everything else (SVG and HTML included) an `attachment` download.",
    params: [{ in: "query", name: "sessionId", schema: ZQueryId, description: "The response's session (checked when given)" }],
    responses: { 200: { description: "The file's bytes", binary: true } },
    errors: [404],
  },
  handle: getResponseAttachment,
});
