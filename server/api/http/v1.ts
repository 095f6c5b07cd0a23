import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { ZDecisionBody } from "../../core/decision";
import { DomainError } from "../../core/errors";
import { readScope } from "../../core/read-scope";
import { cancelResponse } from "../../services/cancel-response";
import { decideApproval } from "../../services/decide-approval";
import { isTerminalFrame } from "../../services/follow-frames";
import { readEnvelope } from "../../services/read/responses";
import { listGrants, revokeGrant } from "../../services/grants";
import { invokeResponse } from "../../services/invoke-response";
import { steerResponse } from "../../services/steer-response";
import { submitClientToolResult } from "../../services/submit-client-tool-result";
import { waitForBoundary } from "../../services/wait-for-boundary";
import { assertStorableText, parseBody, readJson } from "./body";
import { sendError, sendJson } from "./errors";
import { handleAgui } from "./agui";
import { handleGateway } from "./gateway";
import { handleSlackInteraction } from "./slack";
import { identify, type TIdentity } from "./identify";
import type { TV1Deps } from "./deps";
import { streamFrames } from "./sse";

const ZId = z.string().min(1).max(200);

export const ZCreateResponseBody = z.strictObject({
  input: z.union([z.string().min(1, "input must not be empty"), z.record(z.string(), z.unknown())]),
  sessionId: ZId.optional(),
  agent: z.string().min(1).max(64).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  stream: z.boolean().optional(),
});
const ZClientToolBody = z.strictObject({ output: z.unknown() }).refine((b) => "output" in b, { message: "output is required", path: ["output"] });
const ZSteerBody = z.strictObject({ text: z.string().trim().min(1, "text must not be empty").max(10_000) });
const ZCancelBody = z.strictObject({ reason: z.string().max(500).optional() });

type TRoute = { method: string; pattern: RegExp; auth: boolean; handle: (ctx: TRouteCtx) => Promise<void> };
type TRouteCtx = { deps: TV1Deps; req: IncomingMessage; res: ServerResponse; url: URL; params: string[]; actor: TIdentity["actor"]; credential: TIdentity["credential"] };

const routes: TRoute[] = [
  {
    method: "GET",
    pattern: /^\/v1\/healthz$/,
    auth: false,
    handle: async ({ deps, res }) => sendJson(res, 200, { ok: true, database: deps.dbKind }),
  },
  {
    method: "POST",
    pattern: /^\/v1\/responses$/,
    auth: true,
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
        sendJson(res, 200, invoked.answeredQuestionId ? { ...envelope, questionId: invoked.answeredQuestionId } : envelope);
      } finally {
        connection?.release();
      }
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/responses\/([^/]+)$/,
    auth: true,
    handle: async ({ deps, res, url, params, actor }) => {
      const sessionId = requireSessionId(url);
      sendJson(res, 200, await readEnvelope(deps, readScope(actor), { responseId: params[0] as string, sessionId }));
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/responses\/([^/]+)\/events$/,
    auth: true,
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
    handle: async ({ deps, req, res, params, actor }) => {
      const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"];
      const body = hasBody ? parseBody(ZCancelBody, await readJson(req)) : {};
      const cancelled = await cancelResponse(deps, actor, { responseId: params[0] as string, reason: body.reason, via: "http" });
      sendJson(res, 200, cancelled.envelope);
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/responses\/([^/]+)\/steer$/,
    auth: true,
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZSteerBody, await readJson(req));
      const steered = await steerResponse(deps, actor, { responseId: params[0] as string, text: body.text, via: "http", authorityKind: "run", assertCurrent: () => true });
      sendJson(res, 202, steered);
    },
  },
  {
    method: "POST",
    pattern: /^\/v1\/approvals\/([^/]+)$/,
    auth: true,
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZDecisionBody, await readJson(req));
      const decided = await decideApproval(deps, actor, { ...body, approvalId: params[0] as string, via: "http" });
      if (!decided.settled) {
        // One vote of a quorum: recorded, the run keeps waiting for the other approvers.
        sendJson(res, 202, { id: decided.approvalId, status: "pending", approvals: decided.approvals, requiredApprovals: decided.requiredApprovals });
        return;
      }
      if (!decided.continues) {
        sendJson(res, 200, { id: decided.approvalId, status: "denied" });
        return;
      }
      // Approve (as asked or edited) and reply-instead both resume the run: answer with its next boundary.
      const envelope = await waitForBoundary(deps, decided.responseId, decided.resolvedSequence);
      sendJson(res, 200, { ...envelope, approvalId: decided.approvalId, ...(decided.grantId ? { grantId: decided.grantId } : {}) });
    },
  },
  {
    method: "GET",
    pattern: /^\/v1\/grants$/,
    auth: true,
    handle: async ({ deps, res, url, actor }) => {
      const status = url.searchParams.get("status") ?? "active";
      if (status !== "active" && status !== "all") throw new DomainError("invalid_request", 'status must be "active" or "all".');
      sendJson(res, 200, { grants: await listGrants(deps, actor, { status }) });
    },
  },
  {
    method: "DELETE",
    pattern: /^\/v1\/grants\/([^/]+)$/,
    auth: true,
    handle: async ({ deps, res, params, actor }) => sendJson(res, 200, await revokeGrant(deps, actor, params[0] as string)),
  },
  // Authenticated by Slack's request signature (the signing secret), not by an API key.
  { method: "POST", pattern: /^\/v1\/slack\/interactions$/, auth: false, handle: async ({ deps, req, res }) => handleSlackInteraction(deps, req, res) },
  { method: "POST", pattern: /^\/v1\/agui$/, auth: true, handle: async ({ deps, req, res, actor, credential }) => handleAgui(deps, req, res, actor, credential) },
  {
    method: "POST",
    pattern: /^\/v1\/gateway\/([^/]+)$/,
    auth: true,
    handle: async ({ deps, req, res, params, actor }) => handleGateway(deps, req, res, actor, params[0] as string),
  },
  {
    method: "POST",
    pattern: /^\/v1\/client-tools\/([^/]+)$/,
    auth: true,
    handle: async ({ deps, req, res, params, actor }) => {
      const body = parseBody(ZClientToolBody, await readJson(req));
      const submitted = await submitClientToolResult(deps, actor, { requestId: params[0] as string, output: body.output, via: "http" });
      const envelope = await waitForBoundary(deps, submitted.responseId, submitted.resultSequence);
      sendJson(res, 200, { ...envelope, clientToolId: submitted.clientToolId });
    },
  },
];

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
