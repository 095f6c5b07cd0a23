import { EventSchemas, RunAgentInputSchema } from "@ag-ui/core/schemas";
import { z } from "zod";
import { ZEnvelope, ZOutputItem, ZRequiredAction, ZUsage } from "../../core/envelope";
import { ZQuestionRecord } from "../../core/questions/record";
import { ZQuestion } from "../../core/questions/schema";
import { ZErrorBody, ZStreamFrame } from "../../core/wire-frames";
import { CLOSE_AUTH_FAILED, CLOSE_REPLACED, CLOSE_REVOKED, ZDeviceFrame, ZDeviceHello, ZServerFrame } from "../../devices/protocol";
import { ZGatewayError } from "./gateway";
import { LIVE_CLOSE_CODES, ZLiveClientFrame, ZLiveConnect, ZLiveServerFrame } from "./live-frames";

/** A query parameter or header of an operation. */
type TParamDoc = { in: "query" | "header"; name: string; schema: z.ZodType; required?: boolean; description: string };

/** One response of an operation: JSON, or an SSE stream whose `data:` items follow `sse`. */
type TResponseDoc = { description: string; json?: z.ZodType; sse?: z.ZodType; text?: string; binary?: boolean };

/** The OpenAPI description of one operation, kept next to its route in the `/v1` table. */
export type TOperationDoc = {
  operationId: string;
  summary: string;
  /** The path template, e.g. `/v1/responses/{id}`; `{name}` segments are path parameters. */
  path: string;
  description?: string;
  params?: readonly TParamDoc[];
  /** The very schema the handler parses the JSON body with. */
  body?: z.ZodType;
  bodyRequired?: boolean;
  responses: Record<number, TResponseDoc>;
  /** Error statuses besides the ones every route of its kind has (401, 429; 400, 413, 415 with a body). */
  errors?: readonly number[];
};

/** What the document needs of a route in the table (`auth: "self"`: the handler checks its own credential, documented as authenticated). */
export type TDocumentedRoute = { method: string; auth: boolean | "self"; docs: readonly TOperationDoc[] };

const ERROR_MEANINGS: Record<number, string> = {
  400: "Bad request: malformed JSON, a body or parameter that fails its schema (unknown fields included)",
  401: "No or bad credentials",
  403: "Authenticated but not allowed",
  404: "Unknown, or not yours",
  405: "Method not allowed on this path",
  408: "The request body did not arrive in time",
  409: "State conflict: already decided, submitted or consumed, not approved, expired, or the binding changed",
  413: "Body larger than 1 MiB (`POST /v1/responses`, AG-UI: the attachment limits' base64 size plus 1 MiB), an attachment past the per-file or per-run limit, or an external approval's arguments over 64 KiB",
  415: "Body is not JSON, or an attachment's media type is not admitted",
  422: "Validation failed (a client-tool output, an edit of the arguments, a question answer, an attachment's data)",
  429: "Rate limited or too many open streams; see Retry-After",
  503: "Capacity: the database is unavailable or the server is full",
  504: "Timed out waiting for the next boundary",
};

/** AG-UI's own schemas (the handler parses with the first). */
export const AGUI_RUN_INPUT = RunAgentInputSchema as unknown as z.ZodType;
export const AGUI_EVENT = EventSchemas as unknown as z.ZodType;

/** Schemas shared by several operations, frames and the WebSocket, named in `components.schemas`. */
const SHARED_SCHEMAS: Record<string, z.ZodType> = {
  Error: ZErrorBody,
  Envelope: ZEnvelope,
  RequiredAction: ZRequiredAction,
  OutputItem: ZOutputItem,
  Usage: ZUsage,
  Question: ZQuestion,
  QuestionRecord: ZQuestionRecord,
  StreamFrame: ZStreamFrame,
  GatewayError: ZGatewayError,
  LiveConnectFrame: ZLiveConnect,
  LiveClientFrame: ZLiveClientFrame,
  LiveServerFrame: ZLiveServerFrame,
  DeviceHelloFrame: ZDeviceHello,
  DeviceFrame: ZDeviceFrame,
  DeviceServerFrame: ZServerFrame,
  AguiRunAgentInput: AGUI_RUN_INPUT,
  AguiEvent: AGUI_EVENT,
};

/** A small schema written in place (parameters), without the JSON Schema dialect line. */
function inlineSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return rest;
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/**
 * The OpenAPI 3.1 document of `/v1`, generated from the route table's docs and the zod schemas
 * the handlers parse with (request bodies as input, `io: "input"`, so a strict object is
 * `additionalProperties: false`), plus the SSE frames and `/v1/live` frames as schemas.
 */
export function buildOpenApiDocument(routes: readonly TDocumentedRoute[], info: { version: string }): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  const idOf = (schema: z.ZodType, fallback: string): string => {
    const known = registry.get(schema);
    if (known) return known.id;
    registry.add(schema, { id: fallback });
    return fallback;
  };
  for (const [id, schema] of Object.entries(SHARED_SCHEMAS)) registry.add(schema, { id });

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    for (const doc of route.docs) {
      const name = pascal(doc.operationId);
      const pathParams = [...doc.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ in: "path", name: m[1], required: true, schema: { type: "string" } }));
      const otherParams = (doc.params ?? []).map((p) => ({ in: p.in, name: p.name, required: p.required ?? false, description: p.description, schema: inlineSchema(p.schema) }));
      const responses: Record<string, unknown> = {};
      for (const [status, response] of Object.entries(doc.responses)) {
        const content: Record<string, unknown> = {};
        if (response.json) content["application/json"] = { schema: ref(idOf(response.json, `${name}Response${status}`)) };
        if (response.text) content["text/plain"] = { schema: { type: "string", description: response.text } };
        if (response.sse) content["text/event-stream"] = { schema: { type: "string", description: "Server-sent events; each `data:` line is one JSON item of the schema under `x-sse-data`." }, "x-sse-data": ref(idOf(response.sse, `${name}Event`)) };
        if (response.binary) content["*/*"] = { schema: { type: "string", format: "binary" } };
        responses[status] = { description: response.description, ...(Object.keys(content).length > 0 ? { content } : {}) };
      }
      const errorStatuses = new Set([...(route.auth ? [401] : []), 429, ...(doc.body ? [400, 408, 413, 415] : []), ...(doc.errors ?? [])]);
      for (const status of [...errorStatuses].sort((a, b) => a - b)) {
        if (!(String(status) in responses)) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
      }
      const pathItem = paths[doc.path] ?? {};
      paths[doc.path] = pathItem;
      pathItem[route.method.toLowerCase()] = {
        operationId: doc.operationId,
        summary: doc.summary,
        ...(doc.description ? { description: doc.description } : {}),
        ...(route.auth ? {} : { security: [] }),
        ...(pathParams.length + otherParams.length > 0 ? { parameters: [...pathParams, ...otherParams] } : {}),
        ...(doc.body ? { requestBody: { required: doc.bodyRequired ?? true, content: { "application/json": { schema: ref(idOf(doc.body, `${name}Request`)) } } } } : {}),
        responses,
      };
    }
  }

  const { schemas } = z.toJSONSchema(registry, { io: "input", unrepresentable: "any", uri: (id) => `#/components/schemas/${id}` });
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  const errorResponses = Object.fromEntries(
    Object.entries(ERROR_MEANINGS).map(([status, meaning]) => [`Error${status}`, { description: meaning, content: { "application/json": { schema: ref("Error") } } }]),
  );
  return {
    openapi: "3.1.1",
    info: { title: "Countersign API", version: info.version, description: "The neutral `/v1` API of Countersign. The prose contract is docs/api.md in the repository." },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }, { accessToken: [] }],
    paths,
    components: {
      schemas,
      responses: errorResponses,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key" },
        accessToken: { type: "apiKey", in: "query", name: "access_token", description: "An API key, for clients that cannot set headers" },
      },
    },
    "x-websocket": {
      "/v1/live": {
        description: "WebSocket. The first client frame is LiveConnectFrame; then LiveClientFrame. The server sends LiveServerFrame and every StreamFrame of the responses the socket follows.",
        connect: ref("LiveConnectFrame"),
        client: ref("LiveClientFrame"),
        server: { oneOf: [ref("LiveServerFrame"), ref("StreamFrame")] },
        closeCodes: LIVE_CLOSE_CODES,
      },
      "/v1/devices/connect": {
        description: "WebSocket of a paired device (`npm run device`). The first frame is DeviceHelloFrame (pair with a one-time token, or hello with the device credential); then the device sends DeviceFrame and the server DeviceServerFrame.",
        connect: ref("DeviceHelloFrame"),
        client: ref("DeviceFrame"),
        server: ref("DeviceServerFrame"),
        closeCodes: {
          1008: "no pair or hello frame in time, or a malformed first frame",
          1011: "the server could not check the device",
          [CLOSE_AUTH_FAILED]: "pairing or authentication failed",
          [CLOSE_REVOKED]: "the device was revoked",
          [CLOSE_REPLACED]: "another connection of the same device replaced this one",
        },
      },
    },
  };
}
