import { sendJson } from "../shared/respond";
import { buildOpenApiDocument } from "./openapi";
import { defineRoute, serveRoutes, type TPublicCtx, type TRoute } from "./route";
import { aguiRoute } from "./routes/agui";
import { decisionAnalyticsRoute } from "./routes/analytics";
import { consumeApprovalRoute, decideApprovalRoute, getApprovalRoute, listApprovalsRoute, requestApprovalRoute } from "./routes/approvals";
import { getResponseAttachmentRoute } from "./routes/attachments";
import { submitClientToolResultRoute } from "./routes/client-tools";
import { listGrantsRoute, revokeGrantRoute } from "./routes/grants";
import { healthRoute, metricsRoute, readinessRoute } from "./routes/health-metrics";
import { mcpRoute } from "./routes/mcp";
import { applySuggestionRoute, dismissSuggestionRoute, listSuggestionsRoute, simulatePolicyRoute } from "./routes/policy";
import { gatewayRoute } from "./routes/questions";
import { askSideQuestionRoute, cancelResponseRoute, createResponseRoute, followResponseRoute, getResponseRoute, steerResponseRoute } from "./routes/responses";
import { slackInteractionRoute } from "./routes/slack";
import { ZOpenApiDocument } from "./v1-schemas";

/** The version of the `/v1` contract in the API document. */
const API_VERSION = "1.0.0";

/** `GET /v1/openapi.json`: the document of this very table. */
async function getOpenApiDocument({ res }: TPublicCtx): Promise<void> {
  sendJson(res, 200, openApiDocument());
}

const openApiRoute = defineRoute({
  method: "GET",
  path: "/v1/openapi.json",
  // Public like /v1/healthz: the contract holds no secrets, and clients fetch it before they have a key.
  auth: false,
  docs: { operationId: "getOpenApiDocument", summary: "This OpenAPI 3.1 document", responses: { 200: { description: "The document", json: ZOpenApiDocument } } },
  handle: getOpenApiDocument,
});

/**
 * The `/v1` route table: one definition per route, kept in its resource's file under routes/.
 * The order is the API document's (operations, and the names of the schemas they introduce).
 */
const routes: readonly TRoute[] = [
  openApiRoute,
  healthRoute,
  readinessRoute,
  metricsRoute,
  createResponseRoute,
  getResponseRoute,
  followResponseRoute,
  getResponseAttachmentRoute,
  cancelResponseRoute,
  steerResponseRoute,
  askSideQuestionRoute,
  requestApprovalRoute,
  listApprovalsRoute,
  getApprovalRoute,
  consumeApprovalRoute,
  decideApprovalRoute,
  listGrantsRoute,
  revokeGrantRoute,
  decisionAnalyticsRoute,
  listSuggestionsRoute,
  applySuggestionRoute,
  dismissSuggestionRoute,
  simulatePolicyRoute,
  aguiRoute,
  slackInteractionRoute,
  gatewayRoute,
  mcpRoute,
  submitClientToolResultRoute,
];

let cachedDocument: Record<string, unknown> | null = null;
/** Built from the table on first use: the document changes only with the code. */
function openApiDocument(): Record<string, unknown> {
  cachedDocument ??= buildOpenApiDocument(routes, { version: API_VERSION });
  return cachedDocument;
}

/** The routes `handleV1` answers, with their docs (the API document is built from these). */
export const V1_ROUTES: readonly TRoute[] = routes;

/** Serves every `/v1` HTTP route (and `/metrics`); errors become `{"detail","code"}` with the contract's status. */
export const handleV1 = serveRoutes(routes);
