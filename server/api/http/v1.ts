import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { clientAddress, NO_TRUSTED_PROXIES } from "./client-address";
import { ZDecisionBody } from "../../core/decision";
import { ZEnvelope } from "../../core/envelope";
import { DomainError } from "../../core/errors";
import { readScope } from "../../core/read-scope";
import { ZStreamFrame } from "../../core/wire-frames";
import { cancelResponse } from "../../services/cancel-response";
import { decideApproval } from "../../services/decide-approval";
import { isTerminalFrame } from "../../services/follow-frames";
import { listGrants, revokeGrant, ZGrantRecord } from "../../services/grants";
import { invokeResponse } from "../../services/invoke-response";
import { readEnvelope } from "../../services/read/responses";
import { steerResponse } from "../../services/steer-response";
import { submitClientToolResult } from "../../services/submit-client-tool-result";
import { waitForBoundary } from "../../services/wait-for-boundary";
import { handleAgui } from "./agui";
import { assertStorableText, parseBody, readJson } from "./body";
import { handleSlackInteraction } from "./slack";
import type { TV1Deps } from "./deps";
import { sendError, sendJson } from "./errors";
import { GATEWAY_METHODS, handleGateway, ZGatewayError } from "./gateway";
import { identify, type TIdentity } from "./identify";
import { AGUI_EVENT, AGUI_RUN_INPUT, buildOpenApiDocument, type TDocumentedRoute } from "./openapi";
import { streamFrames } from "./sse";
import {
  ZCancelBody,
  ZClientToolBody,
  ZClientToolSubmitted,
  ZCreatedEnvelope,
  ZCreateResponseBody,
  ZDecided,
  ZGrantList,
  ZHealth,
  ZOpenApiDocument,
  ZSteerBody,
  ZSteerQueued,
  ZVoted,
} from "./v1-schemas";

const ZId = z.string().min(1).max(200);
/** What `POST /v1/slack/interactions` answers Slack (its message text; the outcome itself goes to `response_url`). */
const ZSlackAnswer = z.object({ text: z.string(), replacedMessage: z.boolean() });
/** The version of the `/v1` contract in the API document. */
const API_VERSION = "1.0.0";

const SESSION_ID_QUERY = { in: "query", name: "sessionId", schema: ZId, required: true, description: "The response's session" } as const;

type TRoute = TDocumentedRoute & { pattern: RegExp; handle: (ctx: TRouteCtx) => Promise<void> };
type TRouteCtx = { deps: TV1Deps; req: IncomingMessage; res: ServerResponse; url: URL; params: string[]; actor: TIdentity["actor"]; credential: TIdentity["credential"] };

const routes: TRoute[] = [
  {
    method: "GET",
    pattern: /^\/v1\/openapi\.json$/,
    // Public like /v1/healthz: the contract holds no secrets, and clients fetch it before they have a key.
    auth: false,
    docs: [{ operationId: "getOpenApiDocument", summary: "This OpenAPI 3.1 document", path: "/v1/openapi.json", responses: { 200: { description: "The document", json: ZOpenApiDocument } } }],
    handle: async ({ res }) => sendJson(res, 200, openApiDocument()),
  },
  {
    method: "GET",
    pattern: /^\/v1\/healthz$/,
    auth: false,
    docs: [{ operationId: "getHealth", summary: "Is the server up, and on which database", path: "/v1/healthz", responses: { 200: { description: "Up", json: ZHealth } } }],
    handle: async ({ deps, res }) => sendJson(res, 200, { ok: true, database: deps.dbKind } satisfies z.input<typeof ZHealth>),
  },
  {
    method: "POST",
    pattern: /^\/v1\/responses$/,
    auth: true,
    docs: [
      {
        operationId: "createResponse",
        summary: "Invoke an agent",
        path: "/v1/responses",
        description: "Answers at the first boundary (completed, requires_action, denied, cancelled, failed); with `stream: true` streams the frames as SSE until `response.completed`.",
        body: ZCreateResponseBody,
        responses: { 200: { description: "The envelope at the first boundary, or the SSE stream", json: ZCreatedEnvelope, sse: ZStreamFrame } },
        errors: [403, 404, 409, 503, 504],
      },
    ],
    handle: async ({ deps, req, res, actor, credential }) => {
      const body = parseBody(ZCreateResponseBody, await readJson(req));
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
        const invoked = await invokeResponse(deps, actor, body, { via: "http", isSourceCurrent: () => sourceOpen });
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
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/responses\/([^/]+)$/,
    auth: true,
    docs: [{ operationId: "getResponse", summary: "The latest envelope of a response", path: "/v1/responses/{id}", params: [SESSION_ID_QUERY], responses: { 200: { description: "The envelope", json: ZEnvelope } }, errors: [400, 404] }],
    handle: async ({ deps, res, url, params, actor }) => {
      const sessionId = requireSessionId(url);
      sendJson(res, 200, (await readEnvelope(deps, readScope(actor), { responseId: params[0] as string, sessionId })) satisfies z.input<typeof ZEnvelope>);
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/responses\/([^/]+)\/events$/,
    auth: true,
    docs: [
      {
        operationId: "followResponse",
        summary: "Replay a response's stored frames after a sequence, then follow live ones",
        path: "/v1/responses/{id}/events",
        params: [
          SESSION_ID_QUERY,
          { in: "query", name: "after", schema: z.string().regex(/^-?\d+$/), description: "Replay frames after this sequence (default -1: all)" },
          { in: "header", name: "Last-Event-ID", schema: z.string().regex(/^-?\d+$/), description: "As `after`, for reconnecting SSE clients (wins over `after`)" },
        ],
        responses: { 200: { description: "SSE until the terminal frame", sse: ZStreamFrame } },
        errors: [400, 404],
      },
    ],
    handle: async ({ deps, req, res, url, params, actor, credential }) => {
      const responseId = params[0] as string;
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
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/responses\/([^/]+)\/cancel$/,
    auth: true,
    docs: [{ operationId: "cancelResponse", summary: "Cancel a response", path: "/v1/responses/{id}/cancel", body: ZCancelBody, bodyRequired: false, responses: { 200: { description: "The cancelled envelope", json: ZEnvelope } }, errors: [403, 404, 409] }],
    handle: async ({ deps, req, res, params, actor }) => {
      const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"];
      const body = hasBody ? parseBody(ZCancelBody, await readJson(req)) : {};
      const cancelled = await cancelResponse(deps, actor, { responseId: params[0] as string, reason: body.reason, via: "http" });
      sendJson(res, 200, cancelled.envelope satisfies z.input<typeof ZEnvelope>);
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/responses\/([^/]+)\/steer$/,
    auth: true,
    docs: [{ operationId: "steerResponse", summary: "Queue a message for the running agent's next turn", path: "/v1/responses/{id}/steer", body: ZSteerBody, responses: { 202: { description: "Queued", json: ZSteerQueued } }, errors: [403, 404, 409] }],
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZSteerBody, await readJson(req));
      const steered = await steerResponse(deps, actor, { responseId: params[0] as string, text: body.text, via: "http", authorityKind: "run", assertCurrent: () => true });
      sendJson(res, 202, steered satisfies z.input<typeof ZSteerQueued>);
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/approvals\/([^/]+)$/,
    auth: true,
    docs: [
      {
        operationId: "decideApproval",
        summary: "Approve (as asked, edited, with a standing grant) or deny (or reply instead)",
        path: "/v1/approvals/{id}",
        body: ZDecisionBody,
        responses: { 200: { description: "The decision settled the approval", json: ZDecided }, 202: { description: "One vote of a quorum, recorded; the run keeps waiting", json: ZVoted } },
        errors: [403, 404, 409, 422, 504],
      },
    ],
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZDecisionBody, await readJson(req));
      const decided = await decideApproval(deps, actor, { ...body, approvalId: params[0] as string, via: "http" });
      if (!decided.settled) {
        // One vote of a quorum: recorded, the run keeps waiting for the other approvers.
        sendJson(res, 202, { id: decided.approvalId, status: "pending", approvals: decided.approvals, requiredApprovals: decided.requiredApprovals } satisfies z.input<typeof ZVoted>);
        return;
      }
      if (!decided.continues) {
        sendJson(res, 200, { id: decided.approvalId, status: "denied" } satisfies z.input<typeof ZDecided>);
        return;
      }
      // Approve (as asked or edited) and reply-instead both resume the run: answer with its next boundary.
      const envelope = await waitForBoundary(deps, decided.responseId, decided.resolvedSequence);
      sendJson(res, 200, { ...envelope, approvalId: decided.approvalId, ...(decided.grantId ? { grantId: decided.grantId } : {}) } satisfies z.input<typeof ZDecided>);
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/grants$/,
    auth: true,
    docs: [
      {
        operationId: "listGrants",
        summary: "Standing grants the caller may see, newest first",
        path: "/v1/grants",
        params: [{ in: "query", name: "status", schema: z.enum(["active", "all"]), description: "`active` (default) or `all`" }],
        responses: { 200: { description: "The grants", json: ZGrantList } },
        errors: [400],
      },
    ],
    handle: async ({ deps, res, url, actor }) => {
      const status = url.searchParams.get("status") ?? "active";
      if (status !== "active" && status !== "all") throw new DomainError("invalid_request", 'status must be "active" or "all".');
      sendJson(res, 200, { grants: await listGrants(deps, actor, { status }) } satisfies z.input<typeof ZGrantList>);
    },
  },
  {
    method: "DELETE",
    pattern: /^\/v1\/grants\/([^/]+)$/,
    auth: true,
    docs: [{ operationId: "revokeGrant", summary: "Revoke a standing grant", path: "/v1/grants/{id}", responses: { 200: { description: "The revoked grant", json: ZGrantRecord } }, errors: [403, 404, 409] }],
    handle: async ({ deps, req, res, params, actor }) => {
      const origin = { channel: "v1" as const, clientIp: clientAddress(req, deps.trustedProxies ?? NO_TRUSTED_PROXIES) };
      sendJson(res, 200, (await revokeGrant(deps, { actor, origin }, params[0] as string)) satisfies z.input<typeof ZGrantRecord>);
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/agui$/,
    auth: true,
    docs: [
      {
        operationId: "runAgui",
        summary: "Run or resume over the AG-UI protocol",
        path: "/v1/agui",
        body: AGUI_RUN_INPUT,
        responses: { 200: { description: "AG-UI events as SSE", sse: AGUI_EVENT } },
        errors: [403, 404, 409],
      },
    ],
    handle: async ({ deps, req, res, actor, credential }) => handleAgui(deps, req, res, actor, credential),
  },
  {
    // Authenticated by Slack's request signature (the signing secret), not by an API key.
    method: "POST",
    pattern: /^\/v1\/slack\/interactions$/,
    auth: false,
    docs: [
      {
        operationId: "slackInteraction",
        summary: "A click on a Slack message's Approve / Deny / Reply button",
        path: "/v1/slack/interactions",
        description:
          "Sent by Slack, form-encoded (`payload=<JSON>`), signed with the channel's signing secret (`X-Slack-Signature`, `X-Slack-Request-Timestamp` within 5 minutes). The Slack user is mapped to a Countersign user by email and decides with the console's rules; the outcome replaces the message through its `response_url`. 404 when no interactive Slack channel is configured.",
        responses: { 200: { description: "The click was taken (or ignored); `text` says what happened", json: ZSlackAnswer } },
        errors: [404],
      },
    ],
    handle: async ({ deps, req, res }) => handleSlackInteraction(deps, req, res),
  },
  {
    method: "POST",
    pattern: /^\/v1\/gateway\/([^/]+)$/,
    auth: true,
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
    handle: async ({ deps, req, res, params, actor }) => handleGateway(deps, req, res, actor, params[0] as string),
  },
  {
    method: "POST",
    pattern: /^\/v1\/client-tools\/([^/]+)$/,
    auth: true,
    docs: [
      {
        operationId: "submitClientToolResult",
        summary: "Submit a client tool's output",
        path: "/v1/client-tools/{id}",
        body: ZClientToolBody,
        responses: { 200: { description: "The run's next envelope", json: ZClientToolSubmitted } },
        errors: [403, 404, 409, 422, 504],
      },
    ],
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZClientToolBody, await readJson(req));
      const submitted = await submitClientToolResult(deps, actor, { requestId: params[0] as string, output: body.output, via: "http" });
      const envelope = await waitForBoundary(deps, submitted.responseId, submitted.resultSequence);
      sendJson(res, 200, { ...envelope, clientToolId: submitted.clientToolId } satisfies z.input<typeof ZClientToolSubmitted>);
    },
  },
];

let cachedDocument: Record<string, unknown> | null = null;
/** Built from the table on first use: the document changes only with the code. */
function openApiDocument(): Record<string, unknown> {
  cachedDocument ??= buildOpenApiDocument(routes, { version: API_VERSION });
  return cachedDocument;
}

/** The routes `handleV1` answers, with their docs (the API document is built from these). */
export const V1_ROUTES: readonly TDocumentedRoute[] = routes;

function requireSessionId(url: URL): string {
  const sessionId = url.searchParams.get("sessionId");
  if (!sessionId) throw new DomainError("invalid_request", "The sessionId query parameter is required.");
  return sessionId;
}

/** A path segment as the client meant it; a broken percent-escape is a bad request, not a 500. */
function decodePathParam(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    throw new DomainError("invalid_request", "The URL path is not validly percent-encoded.");
  }
  assertStorableText(decoded, "The URL path");
  return decoded;
}

/** Serves every `/v1` HTTP route; errors become `{"detail","code"}` with the contract's status. */
export async function handleV1(deps: TV1Deps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  try {
    const candidates = routes.filter((r) => r.pattern.test(url.pathname));
    if (candidates.length === 0) throw new DomainError("not_found", `There is no route ${url.pathname}.`);
    const route = candidates.find((r) => r.method === req.method);
    if (!route) throw new DomainError("method_not_allowed", `${req.method} is not allowed on ${url.pathname}.`);
    const params = (route.pattern.exec(url.pathname) ?? []).slice(1).map(decodePathParam);
    for (const value of url.searchParams.values()) assertStorableText(value, "The query string");
    const identity = route.auth ? await identify(deps, deps.auth, req, url) : null;
    if (route.auth && !identity) throw new DomainError("unauthenticated", "Authentication required");
    await route.handle({ deps, req, res, url, params, actor: identity?.actor as TRouteCtx["actor"], credential: identity?.credential as TRouteCtx["credential"] });
  } catch (error) {
    if (!(error instanceof DomainError)) deps.log.error({ err: error, path: url.pathname }, "unhandled /v1 error");
    if (!res.headersSent) sendError(res, error);
    else res.end();
  }
}
