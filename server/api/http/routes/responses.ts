import { z } from "zod";
import { ZEnvelope } from "../../../core/envelope";
import { DomainError } from "../../../core/errors";
import { maxBodyBytesFor } from "../../../core/media";
import { readScope } from "../../../core/read-scope";
import { ZStreamFrame } from "../../../core/wire-frames";
import { askSideQuestion } from "../../../services/ask-side-question";
import { cancelResponse } from "../../../services/cancel-response";
import { isTerminalFrame } from "../../../services/follow-frames";
import { invokeResponse } from "../../../services/invoke-response";
import { readEnvelope } from "../../../services/read/responses";
import { steerResponse } from "../../../services/steer-response";
import { waitForBoundary } from "../../../services/wait-for-boundary";
import { sendJson } from "../../shared/respond";
import { readJsonWithAttachments } from "../body";
import { defineRoute, jsonBody, type TAuthedCtx } from "../route";
import { streamFrames } from "../sse";
import {
  SESSION_ID_QUERY,
  ZCancelBody,
  ZCreatedEnvelope,
  ZCreateResponseBody,
  ZSideQuestionAnswer,
  ZSideQuestionBody,
  ZSteerBody,
  ZSteerQueued,
} from "../v1-schemas";

/** `?sessionId=` is required on the routes that read one response. */
function requireSessionId(url: URL): string {
  const sessionId = url.searchParams.get("sessionId");
  if (!sessionId) throw new DomainError("invalid_request", "The sessionId query parameter is required.");
  return sessionId;
}

/** `POST /v1/responses`: attachments' base64 may take the body past 1 MiB, up to the media limits; the rest may not. */
const createBody = jsonBody(ZCreateResponseBody, {
  read: ({ deps, req }) => readJsonWithAttachments(req, maxBodyBytesFor(deps.config.media), (v) => (v as { attachments?: unknown } | null)?.attachments),
});

/** Invokes an agent and answers at its first boundary, or streams its frames (`stream: true`). */
async function createResponse({ deps, req, res, actor, credential, body }: TAuthedCtx<never, typeof ZCreateResponseBody>): Promise<void> {
  // The request itself is the source of plain-text answers: a client that went away is no longer current.
  let sourceOpen = true;
  req.once("close", () => {
    if (!req.complete) sourceOpen = false;
  });
  res.once("close", () => {
    if (!res.writableFinished) sourceOpen = false;
  });
  // A stream past the user's cap is refused before any run starts.
  const connection = body.stream ? deps.connections.open(credential) : null;
  try {
    const invoked = await invokeResponse(deps, actor, body, { via: "http", isSourceCurrent: () => sourceOpen, credential });
    const after = invoked.afterSequence === 0 ? -1 : invoked.afterSequence;
    if (connection) {
      await streamFrames(deps, req, res, { scope: readScope(actor), responseId: invoked.responseId, after, stopAfter: (f) => f.type === "response.completed", connection });
      return;
    }
    const envelope = await waitForBoundary(deps, invoked.responseId, Math.max(0, invoked.afterSequence));
    sendJson(res, 200, (invoked.answeredQuestionId ? { ...envelope, questionId: invoked.answeredQuestionId } : envelope) satisfies z.input<typeof ZCreatedEnvelope>);
  } finally {
    connection?.release();
  }
}

export const createResponseRoute = defineRoute({
  method: "POST",
  path: "/v1/responses",
  auth: true,
  body: createBody,
  docs: {
    operationId: "createResponse",
    summary: "Invoke an agent",
    description: "Answers at the first boundary (completed, requires_action, denied, cancelled, failed); with `stream: true` streams the frames as SSE until `response.completed`.",
    responses: { 200: { description: "The envelope at the first boundary, or the SSE stream", json: ZCreatedEnvelope, sse: ZStreamFrame } },
    errors: [403, 404, 409, 413, 415, 422, 503, 504],
  },
  handle: createResponse,
});

/** The latest envelope of a response the caller may read. */
async function getResponse({ deps, res, url, params, actor }: TAuthedCtx<"id">): Promise<void> {
  const sessionId = requireSessionId(url);
  sendJson(res, 200, (await readEnvelope(deps, readScope(actor), { responseId: params.id, sessionId })) satisfies z.input<typeof ZEnvelope>);
}

export const getResponseRoute = defineRoute({
  method: "GET",
  path: "/v1/responses/{id}",
  auth: true,
  docs: { operationId: "getResponse", summary: "The latest envelope of a response", params: [SESSION_ID_QUERY], responses: { 200: { description: "The envelope", json: ZEnvelope } }, errors: [400, 404] },
  handle: getResponse,
});

/** Replays the stored frames after `after` (or `Last-Event-ID`), then follows live ones until the terminal frame. */
async function followResponse({ deps, req, res, url, params, actor, credential }: TAuthedCtx<"id">): Promise<void> {
  const responseId = params.id;
  const sessionId = requireSessionId(url);
  const raw = (req.headers["last-event-id"] as string | undefined) ?? url.searchParams.get("after") ?? "-1";
  const after = Number(raw);
  if (!Number.isInteger(after) || after < -1) throw new DomainError("invalid_request", "after / Last-Event-ID must be a whole number of at least -1.");
  const connection = deps.connections.open(credential);
  try {
    await streamFrames(deps, req, res, { scope: readScope(actor), responseId, sessionId, after, stopAfter: isTerminalFrame, connection });
  } finally {
    connection.release();
  }
}

export const followResponseRoute = defineRoute({
  method: "GET",
  path: "/v1/responses/{id}/events",
  auth: true,
  docs: {
    operationId: "followResponse",
    summary: "Replay a response's stored frames after a sequence, then follow live ones",
    params: [
      SESSION_ID_QUERY,
      { in: "query", name: "after", schema: z.string().regex(/^-?\d+$/), description: "Replay frames after this sequence (default -1: all)" },
      { in: "header", name: "Last-Event-ID", schema: z.string().regex(/^-?\d+$/), description: "As `after`, for reconnecting SSE clients (wins over `after`)" },
    ],
    responses: { 200: { description: "SSE until the terminal frame", sse: ZStreamFrame } },
    errors: [400, 404],
  },
  handle: followResponse,
});

/** Cancels a response (the body, and its `reason`, are optional). */
async function cancel({ deps, res, params, actor, body }: TAuthedCtx<"id", typeof ZCancelBody>): Promise<void> {
  const cancelled = await cancelResponse(deps, actor, { responseId: params.id, reason: body.reason, via: "http" });
  sendJson(res, 200, cancelled.envelope satisfies z.input<typeof ZEnvelope>);
}

export const cancelResponseRoute = defineRoute({
  method: "POST",
  path: "/v1/responses/{id}/cancel",
  auth: true,
  body: jsonBody(ZCancelBody, { optional: true }),
  docs: { operationId: "cancelResponse", summary: "Cancel a response", responses: { 200: { description: "The cancelled envelope", json: ZEnvelope } }, errors: [403, 404, 409] },
  handle: cancel,
});

/** Queues a message for the running agent's next turn. */
async function steer({ deps, res, params, actor, body }: TAuthedCtx<"id", typeof ZSteerBody>): Promise<void> {
  const steered = await steerResponse(deps, actor, { responseId: params.id, text: body.text, via: "http", authorityKind: "run", assertCurrent: () => true });
  sendJson(res, 202, steered satisfies z.input<typeof ZSteerQueued>);
}

export const steerResponseRoute = defineRoute({
  method: "POST",
  path: "/v1/responses/{id}/steer",
  auth: true,
  body: jsonBody(ZSteerBody),
  docs: { operationId: "steerResponse", summary: "Queue a message for the running agent's next turn", responses: { 202: { description: "Queued", json: ZSteerQueued } }, errors: [403, 404, 409] },
  handle: steer,
});

/** Asks the run's harness a question about the run without steering it; the asker going away abandons it. */
async function sideQuestion({ deps, res, params, actor, body }: TAuthedCtx<"id", typeof ZSideQuestionBody>): Promise<void> {
  // The asker is the question's source: a client that went away abandons it.
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  const answered = await askSideQuestion(deps, actor, { responseId: params.id, question: body.question, via: "http", signal: gone.signal });
  sendJson(res, 200, answered satisfies z.input<typeof ZSideQuestionAnswer>);
}

export const askSideQuestionRoute = defineRoute({
  method: "POST",
  path: "/v1/responses/{id}/side_questions",
  auth: true,
  body: jsonBody(ZSideQuestionBody),
  docs: {
    operationId: "askSideQuestion",
    summary: "Ask the agent a side question about a run, without steering it (an extension beyond the API contract)",
    description:
      "The run's harness answers from the run's transcript so far; the run itself is not changed (no message is queued, its transcript and status stay). The question and the answer are recorded in the run's trajectory (`side_question.answered`). Authorized like steering; any status may be asked, a finished run included. A harness without a side-question handler is a 409; no answer within 120 s is a 504.",
    responses: { 200: { description: "The answer", json: ZSideQuestionAnswer } },
    errors: [403, 404, 409, 504],
  },
  handle: sideQuestion,
});
