import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { clientAddress, NO_TRUSTED_PROXIES } from "../shared/client-address";
import { ZDecisionBody } from "../../core/decision";
import { ZEnvelope } from "../../core/envelope";
import { DomainError } from "../../core/errors";
import { maxBodyBytesFor } from "../../core/media";
import { readScope } from "../../core/read-scope";
import { ZStreamFrame } from "../../core/wire-frames";
import { cancelResponse } from "../../services/cancel-response";
import { decideApproval } from "../../services/decide-approval";
import { isTerminalFrame } from "../../services/follow-frames";
import { listGrants, revokeGrant, ZGrantRecord } from "../../services/grants";
import { invokeResponse } from "../../services/invoke-response";
import { consumeExternalApproval, getExternalApproval, requestExternalApproval, ZExternalApproval, ZExternalApprovalBody } from "../../services/external-approvals";
import { listApprovals } from "../../services/read/approvals";
import { readEnvelope } from "../../services/read/responses";
import { readResponseAttachment } from "../../services/read/attachments";
import { sendFile } from "./send-file";
import { steerResponse } from "../../services/steer-response";
import { askSideQuestion } from "../../services/ask-side-question";
import { submitClientToolResult } from "../../services/submit-client-tool-result";
import { checkReadiness } from "../../services/readiness";
import { waitForBoundary } from "../../services/wait-for-boundary";
import { handleAgui } from "./agui";
import { parseBody, readJson, readJsonWithAttachments } from "./body";
import { assertStorableText } from "../shared/request-body";
import { serveMetrics } from "./metrics";
import { handleSlackInteraction } from "./slack";
import { parseListStatus, parseWait, ZApprovalList, ZConsumeBody } from "./external-approvals";
import { handleMcp } from "./mcp-face";
import type { TTransportDeps } from "../shared/deps";
import { sendJson } from "../shared/respond";
import { sendError } from "./errors";
import { GATEWAY_METHODS, handleGateway, ZGatewayError } from "./gateway";
import { identify, type TIdentity } from "../shared/identify";
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
  ZNotReady,
  ZOpenApiDocument,
  ZReady,
  ZSideQuestionAnswer,
  ZSideQuestionBody,
  ZSteerBody,
  ZSteerQueued,
  ZVoted,
} from "./v1-schemas";

/** Ids name objects the server minted; any other string is simply unknown (404), so no length cap here (the request line's size bounds it). */
const ZId = z.string().min(1);
/** A JSON-RPC 2.0 message (or a batch) of the MCP face. */
const ZMcpMessage = z.union([z.looseObject({ jsonrpc: z.literal("2.0") }), z.array(z.looseObject({ jsonrpc: z.literal("2.0") }))]);
/** What `POST /v1/slack/interactions` answers Slack for a click (its message text; the outcome itself goes to `response_url`). */
const ZSlackAnswer = z.object({ text: z.string(), replacedMessage: z.boolean() });
/** Slack's answer to a submitted form that stays open: the reason shown under the field (an empty 200 closes the form). */
const ZSlackViewErrors = z.object({ response_action: z.literal("errors"), errors: z.record(z.string(), z.string()) });
/** The version of the `/v1` contract in the API document. */
const API_VERSION = "1.0.0";

const SESSION_ID_QUERY = { in: "query", name: "sessionId", schema: ZId, required: true, description: "The response's session" } as const;

type TRoute = TDocumentedRoute & { pattern: RegExp; handle: (ctx: TRouteCtx) => Promise<void> };
type TRouteCtx = { deps: TTransportDeps; req: IncomingMessage; res: ServerResponse; url: URL; params: string[]; actor: TIdentity["actor"]; credential: TIdentity["credential"] };

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
    method: "GET",
    pattern: /^\/v1\/readyz$/,
    // Public like /v1/healthz (load balancers and orchestrators probe it without a key); it names no secret.
    auth: false,
    docs: [
      {
        operationId: "getReadiness",
        summary: "Is the server ready for traffic: the database answers and its migrations are applied",
        path: "/v1/readyz",
        description: "One query, bounded by `COUNTERSIGN_READY_TIMEOUT_MS` (default 2000): a hung database answers 503 `database_timeout` after it, never a hanging probe. A replica draining after SIGTERM answers 503 `draining`. `/v1/healthz` stays the cheap liveness check that touches nothing.",
        responses: { 200: { description: "Ready", json: ZReady }, 503: { description: "Not ready; `reason` says why", json: ZNotReady } },
      },
    ],
    handle: async ({ deps, res }) => {
      // A draining replica (SIGTERM) is alive but takes no new work: load balancers stop sending it any.
      if (deps.drain.draining) {
        return sendJson(res, 503, { detail: deps.drain.detail, code: "capacity", reason: "draining" } satisfies z.input<typeof ZNotReady>, { "cache-control": "no-store", "retry-after": "5" });
      }
      const readiness = await checkReadiness(deps, deps.ops.readyTimeoutMs);
      if (readiness.ready) return sendJson(res, 200, { status: "ready", database: readiness.database, migrations: readiness.migrations } satisfies z.input<typeof ZReady>);
      sendJson(res, 503, { detail: readiness.detail, code: "capacity", reason: readiness.reason } satisfies z.input<typeof ZNotReady>, { "cache-control": "no-store" });
    },
  },
  {
    method: "GET",
    pattern: /^\/metrics$/,
    // Checked by its handler: the metrics token or an admin's credential.
    auth: "self",
    docs: [
      {
        operationId: "getMetrics",
        summary: "Prometheus metrics (text format)",
        path: "/metrics",
        description:
          "For `Authorization: Bearer <COUNTERSIGN_METRICS_TOKEN>` or an admin's API key; 401 without either, 403 for any other role. Also served on `COUNTERSIGN_METRICS_PORT` when set (same rule). docs/operations.md lists the metrics.",
        responses: { 200: { description: "The metrics", text: "Prometheus text exposition format 0.0.4" } },
        errors: [403],
      },
    ],
    handle: async ({ deps, req, res, url }) => serveMetrics(deps, req, res, url, deps.ops.metricsToken),
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
        errors: [403, 404, 409, 413, 415, 422, 503, 504],
      },
    ],
    handle: async ({ deps, req, res, actor, credential }) => {
      const body = parseBody(ZCreateResponseBody, await readJsonWithAttachments(req, maxBodyBytesFor(deps.config.media), (v) => (v as { attachments?: unknown } | null)?.attachments));
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
    method: "GET",
    pattern: /^\/v1\/responses\/([^/]+)\/attachments\/([^/]+)$/,
    auth: true,
    docs: [
      {
        operationId: "getResponseAttachment",
        summary: "Download a file of a response",
        path: "/v1/responses/{id}/attachments/{attachmentId}",
        description:
          "A file the agent attached to its answer (an `attachment` output item's `url`) or one the run was given. Answers only to those who may read the response. `Content-Type` is the file's media type, `X-Content-Type-Options: nosniff`; images are `inline`, everything else (SVG and HTML included) an `attachment` download.",
        params: [{ in: "query", name: "sessionId", schema: ZId, description: "The response's session (checked when given)" }],
        responses: { 200: { description: "The file's bytes", binary: true } },
        errors: [404],
      },
    ],
    handle: async ({ deps, res, url, params, actor }) => {
      const file = await readResponseAttachment(deps, readScope(actor), { responseId: params[0] as string, attachmentId: params[1] as string, sessionId: url.searchParams.get("sessionId") ?? undefined });
      sendFile(res, file);
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
    pattern: /^\/v1\/responses\/([^/]+)\/side_questions$/,
    auth: true,
    docs: [
      {
        operationId: "askSideQuestion",
        summary: "Ask the agent a side question about a run, without steering it (an extension beyond the API contract)",
        path: "/v1/responses/{id}/side_questions",
        description:
          "The run's harness answers from the run's transcript so far; the run itself is not changed (no message is queued, its transcript and status stay). The question and the answer are recorded in the run's trajectory (`side_question.answered`). Authorized like steering; any status may be asked, a finished run included. A harness without a side-question handler is a 409; no answer within 120 s is a 504.",
        body: ZSideQuestionBody,
        responses: { 200: { description: "The answer", json: ZSideQuestionAnswer } },
        errors: [403, 404, 409, 504],
      },
    ],
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZSideQuestionBody, await readJson(req));
      // The asker is the question's source: a client that went away abandons it.
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) gone.abort();
      });
      const answered = await askSideQuestion(deps, actor, { responseId: params[0] as string, question: body.question, via: "http", signal: gone.signal });
      sendJson(res, 200, answered satisfies z.input<typeof ZSideQuestionAnswer>);
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/approvals$/,
    auth: true,
    docs: [
      {
        operationId: "requestApproval",
        summary: "Ask for approval of an operation the caller runs itself (bring your own agent)",
        path: "/v1/approvals",
        description:
          "The agent's policy, the exec reviewer, standing grants, quorum and notifications apply as for hosted runs; the status may already be `approved` (a grant, a `never` policy) or `denied` (the reviewer). An unknown action or arguments its tool refuses are 422; arguments over 64 KiB are 413. The same `idempotencyKey` (per caller) answers 200 with the same approval.",
        body: ZExternalApprovalBody,
        responses: {
          201: { description: "Created: the approval as `GET /v1/approvals/{id}` shows it", json: ZExternalApproval },
          200: { description: "The approval this idempotency key already names, as it is now (after an approver's edit: `edited: true`, the edited `arguments` and their `bindingHash`)", json: ZExternalApproval },
        },
        errors: [403, 404, 409, 422],
      },
    ],
    handle: async ({ deps, req, res, actor }) => {
      const body = parseBody(ZExternalApprovalBody, await readJson(req));
      const { approval, replayed } = await requestExternalApproval(deps, actor, body);
      sendJson(res, replayed ? 200 : 201, approval satisfies z.input<typeof ZExternalApproval>);
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/approvals$/,
    auth: true,
    docs: [
      {
        operationId: "listApprovals",
        summary: "Approvals the caller may see (operators, admins, auditors: all; members: their own), newest first",
        path: "/v1/approvals",
        params: [{ in: "query", name: "status", schema: z.enum(["pending", "decided"]), description: "`pending` (default) or `decided`" }],
        responses: { 200: { description: "At most 200 approvals", json: ZApprovalList } },
        errors: [400],
      },
    ],
    handle: async ({ deps, res, url, actor }) => {
      const status = parseListStatus(url.searchParams.get("status"));
      sendJson(res, 200, { approvals: await listApprovals(deps, readScope(actor), { status }) } satisfies z.input<typeof ZApprovalList>);
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/approvals\/([^/]+)$/,
    auth: true,
    docs: [
      {
        operationId: "getApproval",
        summary: "An approval's status; with `wait`, long-polls while it is pending",
        path: "/v1/approvals/{id}",
        params: [{ in: "query", name: "wait", schema: z.string().regex(/^\d+$/), description: "Wait up to this many ms for a decision (bounded by COUNTERSIGN_BOUNDARY_TIMEOUT_MS; past it, the current status)" }],
        responses: { 200: { description: "The approval: status, the arguments to run (edited when an approver changed them), a reply message", json: ZExternalApproval } },
        errors: [400, 404],
      },
    ],
    handle: async ({ deps, res, url, params, actor }) => {
      const waitMs = parseWait(url.searchParams.get("wait"));
      sendJson(res, 200, (await getExternalApproval(deps, actor, params[0] as string, waitMs)) satisfies z.input<typeof ZExternalApproval>);
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/approvals\/([^/]+)\/consume$/,
    auth: true,
    docs: [
      {
        operationId: "consumeApproval",
        summary: "Use an approved external approval once, right before running the operation",
        path: "/v1/approvals/{id}/consume",
        description:
          "`bindingHash` must be the approved operation's (from the create answer, or from GET after an edit). 200 exactly once; 409 `already_consumed`, `binding_changed` (a different hash), `expired`, `not_approved` (pending, denied, cancelled) or `conflict` (a hosted run's approval).",
        body: ZConsumeBody,
        responses: { 200: { description: "Consumed: run the operation now", json: ZExternalApproval } },
        errors: [403, 404, 409],
      },
    ],
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZConsumeBody, await readJson(req));
      sendJson(res, 200, (await consumeExternalApproval(deps, actor, params[0] as string, body.bindingHash)) satisfies z.input<typeof ZExternalApproval>);
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
        summary: "A click on a Slack message's Approve / Deny / Reply button, or a submitted reply form",
        path: "/v1/slack/interactions",
        description:
          "Sent by Slack, form-encoded (`payload=<JSON>`), signed with the channel's signing secret (`X-Slack-Signature`, `X-Slack-Request-Timestamp` within 5 minutes). The Slack user is mapped to a Countersign user by email and decides with the console's rules; the outcome replaces the message through its `response_url`. Reply opens a form (`views.open`); its `view_submission` is answered as Slack expects: an empty 200 closes it, `{\"response_action\":\"errors\",…}` keeps it open with the reason. 404 when no interactive Slack channel is configured.",
        responses: { 200: { description: "A click was taken (or ignored; `text` says what happened); a form was closed (empty body) or kept open with its errors", json: z.union([ZSlackAnswer, ZSlackViewErrors]) } },
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
    pattern: /^\/v1\/mcp$/,
    auth: true,
    docs: [
      {
        operationId: "mcp",
        summary: "Countersign as an MCP server (Streamable HTTP, stateless): request_approval, ask_user, approval_prompt",
        path: "/v1/mcp",
        description:
          "JSON-RPC 2.0 messages of the Model Context Protocol, answered as JSON (`Accept: application/json, text/event-stream`). Authenticated with an API key (`Authorization: Bearer`); a console cookie is refused. `?agent=NAME` names the agent whose policy applies (default: the installation's default agent). Tools: `request_approval` {action, arguments, message?, risk?, agent?, timeoutSeconds?} (an external approval, waited for and consumed when approved), `ask_user` {question, options?, header?, timeoutSeconds?}, `approval_prompt` {tool_name, input} (a coding agent's permission prompt: the action `coding:<tool_name>`) → `{\"behavior\":\"allow\",\"updatedInput\"}` (exactly the approved input) or `{\"behavior\":\"deny\",\"message\"}`.",
        params: [{ in: "query", name: "agent", schema: z.string().min(1).max(64), description: "The agent whose policy applies to every tool call of this request" }],
        body: ZMcpMessage,
        responses: { 200: { description: "The JSON-RPC answer", json: ZMcpMessage }, 202: { description: "A notification or response was accepted" } },
      },
    ],
    handle: async ({ deps, req, res, url, actor, credential }) => {
      if (credential.via !== "api_key") throw new DomainError("unauthenticated", "/v1/mcp takes an API key (Authorization: Bearer).");
      const agent = url.searchParams.get("agent");
      if (agent !== null && !deps.agents.find(agent)) throw new DomainError("invalid_request", `agent: no agent named ${agent.slice(0, 64)} is configured.`);
      await handleMcp(deps, req, res, actor, agent ?? undefined);
    },
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
export async function handleV1(deps: TTransportDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  try {
    const candidates = routes.filter((r) => r.pattern.test(url.pathname));
    if (candidates.length === 0) throw new DomainError("not_found", `There is no route ${url.pathname}.`);
    const route = candidates.find((r) => r.method === req.method);
    if (!route) throw new DomainError("method_not_allowed", `${req.method} is not allowed on ${url.pathname}.`);
    const params = (route.pattern.exec(url.pathname) ?? []).slice(1).map(decodePathParam);
    for (const value of url.searchParams.values()) assertStorableText(value, "The query string");
    const identity = route.auth === true ? await identify(deps, deps.auth, req, url) : null;
    if (route.auth === true && !identity) throw new DomainError("unauthenticated", "Authentication required");
    await route.handle({ deps, req, res, url, params, actor: identity?.actor as TRouteCtx["actor"], credential: identity?.credential as TRouteCtx["credential"] });
  } catch (error) {
    if (!(error instanceof DomainError)) deps.log.error({ err: error, path: url.pathname }, "unhandled /v1 error");
    if (!res.headersSent) sendError(res, error);
    else res.end();
  }
}
