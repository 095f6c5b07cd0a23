import { mediaBytesOf } from "../../../db/repositories/media";
import { notFound } from "../../core/errors";
import type { TReadScope } from "../../core/read-scope";
import type { TDeps } from "../../host/deps";
import { readResponse } from "./responses";

/** A file of a response as it is served: facts and bytes. */
export type TAttachmentDownload = { id: string; name: string; mediaType: string; size: number; bytes: Uint8Array };

/**
 * One attachment of a response, for those who may read the response (its owner, and the roles
 * that read everything): a file the agent attached to its answer, or one the run was given. Any
 * other id (or a response the scope may not read) is a 404.
 */
export async function readResponseAttachment(deps: Pick<TDeps, "db">, scope: TReadScope, input: { responseId: string; attachmentId: string; sessionId?: string }): Promise<TAttachmentDownload> {
  const row = await readResponse(deps, scope, input.responseId, { sessionId: input.sessionId });
  const reply = row.output.find((item) => item.type === "attachment" && item.id === input.attachmentId);
  const fact = reply?.type === "attachment" ? reply : row.attachments.find((a) => a.id === input.attachmentId);
  if (!fact) throw notFound("attachment", input.attachmentId);
  // The media belongs to the response's owner, whoever reads it.
  const bytes = (await mediaBytesOf(deps.db, row.userId, [fact.id])).get(fact.id);
  if (!bytes) throw notFound("attachment", input.attachmentId);
  return { id: fact.id, name: fact.name, mediaType: fact.mediaType, size: bytes.byteLength, bytes };
}
