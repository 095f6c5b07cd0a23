import type { IncomingMessage, ServerResponse } from "node:http";
import { DomainError } from "../../core/errors";
import { readScope } from "../../core/read-scope";
import { readQuestionAttachment } from "../../services/read/attachments";
import { answerLinkActor } from "../shared/answer-grant";
import type { TTransportDeps } from "../shared/deps";
import { identify } from "../shared/identify";
import { sendFile } from "./send-file";

const PATH = /^\/api\/answer\/([^/]+)\/files\/([^/]+)$/;

const decoded = (segment: string): string | null => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
};

/** Is this the path of an answer page's file (`/api/answer/{questionId}/files/{attachmentId}`)? */
export const isAnswerFilePath = (pathname: string): boolean => PATH.test(pathname);

/**
 * `GET /api/answer/{questionId}/files/{attachmentId}`: a file of the run that asks the question,
 * for the answer page. It answers to a signed-in reader (console cookie or API key) and to the
 * holder of that question's answer-link cookie, each only for a question they may see and a run
 * they may read, and only that run's files (anything else is a 404). Sent like every stored file:
 * its own type, `nosniff`, only raster images inline (SVG and HTML are downloads).
 */
export async function handleAnswerFile(deps: TTransportDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const [, rawQuestion = "", rawAttachment = ""] = url.pathname.match(PATH) ?? [];
  const questionId = decoded(rawQuestion);
  const attachmentId = decoded(rawAttachment);
  if (!questionId || !attachmentId) throw new DomainError("not_found", `There is no file at ${url.pathname}.`);
  if (req.method !== "GET") throw new DomainError("method_not_allowed", "Use GET to fetch a file of a question's run.");
  const actor = (await identify(deps, deps.auth, req, url))?.actor ?? (await answerLinkActor(deps, req, questionId));
  if (!actor) throw new DomainError("unauthenticated", "Authentication required");
  sendFile(res, await readQuestionAttachment(deps, readScope(actor), { questionId, attachmentId }));
}
