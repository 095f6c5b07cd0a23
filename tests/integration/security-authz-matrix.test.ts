import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { approvals } from "../../db/schema";
import { testDbKind } from "../../db/testing";
import { GATEWAY_METHODS } from "../../server/api/http/gateway";
import { V1_ROUTES } from "../../server/api/http/v1";
import { appRouter } from "../../server/api/trpc/root";
import { createApiKey } from "../../server/auth/api-keys";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { LiveClient } from "./helpers";
import { trpcGet, trpcPost, trpcSubscribe } from "./security-helpers";

/**
 * The authorization matrix: every role × every /v1 route, WebSocket frame and tRPC procedure.
 * Objects (runs, approvals, client-tool requests, questions, sessions) belong to `owner`, a member;
 * `member` is another member, so its column is the object-level check (another user's id must look
 * missing: 404, or the gateway's QUESTION_NOT_FOUND 400). `none` sends no credentials.
 * Separation of duties: the owner (a member) may not decide its own run's approvals (403), on any
 * transport; operators and admins decide anyone's, their own too (the demo agent's default).
 * A mutation cell gets a fresh object of its own. The table is the expectation; the test runs
 * every cell and compares the whole table at once.
 */

const ROLES = ["admin", "operator", "member", "auditor", "none", "owner"] as const;
type TRole = (typeof ROLES)[number];
type TCell = number | string;
type TRow = [TCell, TCell, TCell, TCell, TCell, TCell];

// biome-ignore format: the table is easier to read aligned
const V1: Record<string, TRow> = {
  //                                                  admin     operator  member       auditor      none    owner
  "GET /v1/healthz":                                 [200,      200,      200,         200,         200,    200],
  "GET /v1/openapi.json":                            [200,      200,      200,         200,         200,    200],
  // Readiness is public like liveness (probes carry no key); the metrics are for admins (or the metrics token).
  "GET /v1/readyz":                                  [200,      200,      200,         200,         200,    200],
  "GET /metrics":                                    [200,      403,      403,         403,         401,    403],
  "POST /v1/responses":                              [200,      200,      200,         403,         401,    200],
  "POST /v1/responses (owner's sessionId)":          [404,      404,      404,         403,         401,    200],
  // Reading and following a response is one check on every transport (readScope): the roles that read everything read it.
  "GET /v1/responses/{id}?sessionId=":               [200,      200,      404,         200,         401,    200],
  "GET /v1/responses/{id}/events?sessionId=":        [200,      200,      404,         200,         401,    200],
  "GET /v1/responses/{id}/attachments/{attachmentId}": [200,     200,      404,         200,         401,    200],
  "POST /v1/responses/{id}/cancel":                  [200,      200,      404,         403,         401,    200],
  "POST /v1/responses/{id}/steer":                   [202,      202,      404,         403,         401,    202],
  // Asked like steering; the scripted harness answers no side questions: 409 for every role that may ask.
  "POST /v1/responses/{id}/side_questions":          [409,      409,      404,         403,         401,    409],
  "POST /v1/approvals/{id}":                         [200,      200,      404,         403,         401,    403],
  "POST /v1/approvals/{id} (the caller's own run)":  [200,      200,      403,         403,         401,    403],
  // External approvals (bring your own agent): the owner's, requested over POST /v1/approvals.
  "POST /v1/approvals":                              [201,      201,      201,         403,         401,    201],
  "GET /v1/approvals":                               [200,      200,      200,         200,         401,    200],
  "GET /v1/approvals/{id}":                          [200,      200,      404,         200,         401,    200],
  "POST /v1/approvals/{id} (external)":              [200,      200,      404,         403,         401,    403],
  "POST /v1/approvals/{id}/consume":                 [403,      403,      404,         403,         401,    200],
  // The MCP face answers any key holder (an auditor's tool calls are refused inside, as on /v1).
  "POST /v1/mcp (initialize)":                       [200,      200,      200,         200,         401,    200],
  "POST /v1/client-tools/{id}":                      [200,      200,      404,         403,         401,    200],
  "POST /v1/client-tools/{id} (private input)":      [403,      403,      404,         403,         401,    200],
  "POST /v1/agui":                                   [200,      200,      200,         403,         401,    200],
  "GET /v1/grants":                                  [200,      200,      200,         200,         401,    200],
  "DELETE /v1/grants/{id}":                          [200,      200,      404,         403,         401,    200],
  // Every role reads the figures; a member's cover its own requests only (analytics.test.ts).
  "GET /v1/analytics/decisions":                     [200,      200,      200,         200,         401,    200],
  // Suggestions: workspace readers read them; only admins apply or dismiss (this id names none).
  "GET /v1/policy/suggestions":                       [200,      200,      403,         200,         401,    403],
  "POST /v1/policy/suggestions/{id}/apply":           [404,      403,      403,         403,         401,    403],
  "POST /v1/policy/suggestions/{id}/dismiss":         [404,      403,      403,         403,         401,    403],
  "POST /v1/policy/simulate":                         [200,      200,      403,         200,         401,    403],
  // Authenticated by Slack's request signature, never by a key: off (404) for every caller without an
  // interactive Slack channel; with one, an unsigned or badly signed request is 401 (notify-slack.test.ts).
  "POST /v1/slack/interactions":                     [404,      404,      404,         404,         404,    404],
  "POST /v1/gateway/question.request":               [200,      200,      200,         403,         401,    200],
  "POST /v1/gateway/question.get":                   [200,      200,      400,         200,         401,    200],
  "POST /v1/gateway/question.list":                  [200,      200,      200,         200,         401,    200],
  "POST /v1/gateway/question.waitAnswer":            [200,      200,      400,         200,         401,    200],
  "POST /v1/gateway/question.resolve":               [200,      200,      400,         403,         401,    200],
  "WS /v1/live connect":                             ["open",   "open",   "open",      "open",      4401,   "open"],
  "WS approval.decision":                            ["resolved","resolved","not_found", "forbidden", 4401,   "forbidden"],
  "WS client_tool.result":                           ["completed","completed","not_found","forbidden",4401,   "completed"],
  "WS response.cancel":                              ["cancelled","cancelled","not_found","forbidden",4401,   "cancelled"],
  "WS response.steer":                               ["queued", "queued",   "not_found", "forbidden", 4401,   "queued"],
  "WS response.subscribe":                           ["frames", "frames",  "not_found", "frames",    4401,  "frames"],
};

// biome-ignore format: the table is easier to read aligned
const TRPC: Record<string, TRow> = {
  //                                                  admin     operator  member       auditor      none    owner
  "me":                                              [200,      200,      200,         200,         401,    200],
  "signInMethods":                                   [200,      200,      200,         200,         200,    200],
  "approvals.list":                                  [200,      200,      200,         200,         401,    200],
  "approvals.decide":                                [200,      200,      404,         403,         401,    403],
  "responses.list":                                  [200,      200,      200,         200,         401,    200],
  "responses.get":                                   [200,      200,      404,         200,         401,    200],
  "responses.steer":                                 [200,      200,      404,         403,         401,    200],
  "responses.askSideQuestion":                       [409,      409,      404,         403,         401,    409],
  "responses.sessionUsage":                          [200,      200,      404,         200,         401,    200],
  "responses.cancel":                                [200,      200,      404,         403,         401,    200],
  "responses.onFrames":                              [200,      200,      404,         200,         401,    200],
  "users.names":                                     [200,      200,      200,         200,         401,    200],
  // One's own console language: every signed-in role (an auditor's preference changes nothing of the workspace).
  "settings.get":                                    [200,      200,      200,         200,         401,    200],
  "settings.setLocale":                              [200,      200,      200,         200,         401,    200],
  "account.sessions":                                [200,      200,      200,         200,         401,    200],
  "account.endSession":                              [404,      404,      404,         404,         401,    404],
  // One's own display name: every signed-in role (checked and recorded like an admin's rename).
  "settings.setName":                                [200,      200,      200,         200,         401,    200],
  "question.request":                                [200,      200,      200,         403,         401,    200],
  "question.waitAnswer":                             [200,      200,      404,         200,         401,    200],
  "question.resolve":                                [200,      200,      404,         403,         401,    200],
  "question.get":                                    [200,      200,      404,         200,         401,    200],
  "question.context":                                [200,      200,      404,         200,         401,    200],
  "question.list":                                   [200,      200,      200,         200,         401,    200],
  "question.page":                                   [200,      200,      200,         200,         401,    200],
  "question.viewer":                                 [200,      200,      200,         200,         401,    200],
  "devices.createPairing":                           [200,      403,      403,         403,         401,    403],
  "devices.list":                                    [200,      200,      403,         200,         401,    403],
  "devices.page":                                    [200,      200,      403,         200,         401,    403],
  "devices.revoke":                                  [200,      403,      403,         403,         401,    403],
  "sessions.get":                                    [200,      200,      404,         200,         401,    200],
  "sessions.setAccess":                              [200,      200,      404,         403,         401,    200],
  "sessions.setAccess (Full access)":                [200,      200,      404,         403,         401,    403],
  "console.waiting":                                 [200,      200,      200,         200,         401,    200],
  "console.onActivity":                              [200,      200,      200,         200,         401,    200],
  "console.usage":                                   [200,      200,      200,         200,         401,    200],
  "console.people":                                  [200,      200,      200,         200,         401,    200],
  "analytics.decisions":                             [200,      200,      200,         200,         401,    200],
  "analytics.requests":                              [200,      200,      200,         200,         401,    200],
  "analytics.outcomes":                              [200,      200,      200,         200,         401,    200],
  "analytics.times":                                 [200,      200,      200,         200,         401,    200],
  "analytics.repeated":                              [200,      200,      200,         200,         401,    200],
  "analytics.expired":                               [200,      200,      200,         200,         401,    200],
  "policy.suggestions":                              [200,      200,      403,         200,         401,    403],
  "policy.applySuggestion":                          [404,      403,      403,         403,         401,    403],
  "policy.dismissSuggestion":                        [404,      403,      403,         403,         401,    403],
  "policy.simulate":                                 [200,      200,      403,         200,         401,    403],
  "console.agents":                                  [200,      200,      200,         200,         401,    200],
  "inbox.list":                                      [200,      200,      200,         200,         401,    200],
  "inbox.context":                                   [200,      200,      404,         200,         401,    200],
  "inbox.files":                                     [200,      200,      404,         200,         401,    200],
  "inbox.decideMany":                                [200,      200,      404,         403,         401,    403],
  "audit.responses":                                 [200,      200,      200,         200,         401,    200],
  "audit.sessions":                                  [200,      200,      200,         200,         401,    200],
  "audit.response":                                  [200,      200,      404,         200,         401,    200],
  "audit.session":                                   [200,      200,      404,         200,         401,    200],
  "audit.trajectory":                                [200,      200,      404,         200,         401,    200],
  "audit.timeline":                                  [200,      200,      404,         200,         401,    200],
  "audit.actors":                                    [200,      200,      404,         200,         401,    200],
  "admin.users":                                     [200,      200,      403,         200,         401,    403],
  "admin.plugins":                                   [200,      200,      403,         200,         401,    403],
  "admin.usersPage":                                 [200,      200,      403,         200,         401,    403],
  "admin.setRole":                                   [200,      403,      403,         403,         401,    403],
  "admin.renameUser":                                [200,      403,      403,         403,         401,    403],
  "admin.setUserTeams":                              [200,      403,      403,         403,         401,    403],
  "admin.disableUser":                               [200,      403,      403,         403,         401,    403],
  "admin.enableUser":                                [200,      403,      403,         403,         401,    403],
  "admin.deleteUser":                                [200,      403,      403,         403,         401,    403],
  "admin.offboardUser":                              [200,      403,      403,         403,         401,    403],
  "admin.apiKeys":                                   [200,      200,      200,         200,         401,    200],
  "admin.agentsConfig":                              [200,      403,      403,         200,         401,    403],
  "admin.reloadAgents":                              [200,      403,      403,         403,         401,    403],
  "admin.apiKeysPage":                               [200,      200,      200,         200,         401,    200],
  // The admin trail: admins and auditors read it (tRPC and its JSONL export); nobody edits it (there is no procedure to).
  "admin.trail":                                     [200,      403,      403,         200,         401,    403],
  "admin.trailActors":                               [200,      403,      403,         200,         401,    403],
  "admin.createApiKey":                              [200,      200,      200,         403,         401,    200],
  "admin.createApiKey (for the owner)":              [200,      403,      403,         403,         401,    200],
  "admin.revokeApiKey (the owner's key)":            [200,      404,      404,         403,         401,    200],
  "grants.list":                                     [200,      200,      200,         200,         401,    200],
  "grants.page":                                     [200,      200,      200,         200,         401,    200],
  "grants.revoke":                                   [200,      200,      404,         403,         401,    200],
  "notifications.list":                              [200,      200,      403,         200,         401,    403],
  "notifications.attempts":                          [200,      200,      403,         200,         401,    403],
  "notifications.channels":                          [200,      200,      403,         200,         401,    403],
  // Single-use links authenticate by their token alone: every caller gets the same answer.
  "link.get (unknown token)":                        [404,      404,      404,         404,         404,    404],
  "link.decide (unknown token)":                     [404,      404,      404,         404,         404,    404],
  "link.answer (unknown token)":                     [404,      404,      404,         404,         404,    404],
};

let app: TTestApp;
const users = {} as Record<Exclude<TRole, "none">, TTestUser>;
let completed: { id: string; sessionId: string };
let ownerQuestion: string;
let replyAttachmentUrl: string;

beforeAll(async () => {
  app = await startTestApp();
  for (const role of ["admin", "operator", "member", "auditor"] as const) users[role] = await app.user(role);
  users.owner = await app.user("member", `Owner ${Date.now()}`);
  completed = (await (await app.api("/v1/responses", { key: users.owner.apiKey, body: { input: "hello" } })).json()) as { id: string; sessionId: string };
  ownerQuestion = await question();
  // A file the owner's agent attached to its answer.
  writeFileSync(join(app.dataDir, "workspaces", completed.sessionId, "report.txt"), "ok");
  const replied = (await (await app.api("/v1/responses", { key: users.owner.apiKey, body: { input: { script: [{ text: "see", replyAttachments: ["report.txt"] }] }, sessionId: completed.sessionId } })).json()) as {
    output: Array<{ type: string; url?: string }>;
  };
  replyAttachmentUrl = replied.output.find((i) => i.type === "attachment")?.url as string;
});
afterAll(async () => {
  await app?.close();
});

const keyOf = (role: TRole): string | undefined => (role === "none" ? undefined : users[role].apiKey);
const exec = { script: [{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }, { text: "done" }] };
const QUESTIONS = [{ questionId: "pick", header: "Pick", question: "Which?", options: [{ label: "a" }, { label: "b" }] }];

/** A fresh run of the owner (or of another user) suspended on an approval. */
async function suspended(starter: TTestUser = users.owner): Promise<{ id: string; sessionId: string; approvalId: string; bindingHash: string }> {
  const env = (await (await app.api("/v1/responses", { key: starter.apiKey, body: { input: exec } })).json()) as { id: string; sessionId: string; requiredAction: { id: string } };
  const [row] = await app.deps.db.select({ bindingHash: approvals.bindingHash }).from(approvals).where(eq(approvals.id, env.requiredAction.id));
  return { id: env.id, sessionId: env.sessionId, approvalId: env.requiredAction.id, bindingHash: row?.bindingHash as string };
}

/** A fresh external approval of the owner's: `echo` needs nobody (approved at once), `exec` waits for a person. */
async function external(action: "echo" | "exec"): Promise<{ id: string; bindingHash: string }> {
  const body = action === "echo" ? { action, arguments: { text: "hi" } } : { action, arguments: { command: "make deploy" } };
  return (await (await app.api("/v1/approvals", { key: users.owner.apiKey, body })).json()) as { id: string; bindingHash: string };
}

/** A fresh standing grant of the owner's (a session grant an operator gives when approving). */
async function ownerGrant(): Promise<string> {
  const run = await suspended();
  const res = await app.api(`/v1/approvals/${run.approvalId}`, { key: users.operator.apiKey, body: { decision: "approve", grant: "session" } });
  return ((await res.json()) as { grantId: string }).grantId;
}

/** A fresh client-tool request of the owner. */
async function clientTool(name: "get_page_context" | "collect_card_details"): Promise<{ id: string; responseId: string }> {
  const env = (await (await app.api("/v1/responses", { key: users.owner.apiKey, body: { input: { script: [{ toolCalls: [{ name }] }, { text: "ok" }] } } })).json()) as { id: string; requiredAction: { id: string } };
  return { id: env.requiredAction.id, responseId: env.id };
}

/** A fresh gateway question of the owner. */
async function question(): Promise<string> {
  const res = await app.api("/v1/gateway/question.request", { key: users.owner.apiKey, body: { questions: QUESTIONS, timeoutMs: 600_000 } });
  return ((await res.json()) as { payload: { id: string } }).payload.id;
}

/** A /v1 call; error bodies must have the contract's shape. */
async function v1(role: TRole, method: string, path: string, body?: unknown): Promise<number> {
  const res = await app.api(path, { method, key: keyOf(role), body });
  const text = await res.text();
  expect(text, `${method} ${path} as ${role}`).not.toMatch(/\n\s+at /);
  if (res.status >= 400) {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (path.startsWith("/v1/gateway/") && res.status !== 401) expect(parsed, `${path} as ${role}`).toMatchObject({ ok: false, error: { code: expect.any(String), message: expect.any(String) } });
    else expect(Object.keys(parsed).sort(), `${method} ${path} as ${role}: ${text}`).toEqual(["code", "detail"]);
  }
  return res.status;
}

/** Opens a socket as `role`; 4401 when refused. */
async function socket(role: TRole): Promise<LiveClient | number> {
  const client = await LiveClient.open(app, keyOf(role) ?? null, { connect: false });
  client.send({ type: "connect" });
  const first = await Promise.race([client.waitFor((f) => f.type === "session.connected").then(() => null), client.closed.then((c) => c.code)]).catch(() => null);
  if (typeof first === "number") return first;
  return client;
}

/** Sends one frame as `role` and reports what came back: `done(frames)` names success, else the error code. */
async function frame(role: TRole, send: Record<string, unknown>, done: (c: LiveClient) => Promise<unknown>, success: string): Promise<TCell> {
  const client = await socket(role);
  if (typeof client === "number") return client;
  try {
    client.send(send);
    const outcome = await Promise.race([done(client).then(() => success), client.waitFor((f) => f.type === "error").then((f) => String(f.code))]);
    return outcome;
  } finally {
    client.close();
  }
}

const V1_CELLS: Record<keyof typeof V1, (role: TRole) => Promise<TCell>> = {
  "GET /v1/healthz": (r) => v1(r, "GET", "/v1/healthz"),
  "GET /v1/openapi.json": (r) => v1(r, "GET", "/v1/openapi.json"),
  "GET /v1/readyz": (r) => v1(r, "GET", "/v1/readyz"),
  "GET /metrics": (r) => v1(r, "GET", "/metrics"),
  "POST /v1/responses": (r) => v1(r, "POST", "/v1/responses", { input: "hi" }),
  "POST /v1/responses (owner's sessionId)": (r) => v1(r, "POST", "/v1/responses", { input: "hi", sessionId: completed.sessionId }),
  "GET /v1/responses/{id}?sessionId=": (r) => v1(r, "GET", `/v1/responses/${completed.id}?sessionId=${completed.sessionId}`),
  "GET /v1/responses/{id}/events?sessionId=": (r) => v1(r, "GET", `/v1/responses/${completed.id}/events?sessionId=${completed.sessionId}`),
  "GET /v1/responses/{id}/attachments/{attachmentId}": (r) => v1(r, "GET", replyAttachmentUrl),
  "POST /v1/responses/{id}/cancel": async (r) => v1(r, "POST", `/v1/responses/${(await suspended()).id}/cancel`, {}),
  "POST /v1/responses/{id}/steer": async (r) => v1(r, "POST", `/v1/responses/${(await suspended()).id}/steer`, { text: "also check the logs" }),
  "POST /v1/responses/{id}/side_questions": async (r) => v1(r, "POST", `/v1/responses/${completed.id}/side_questions`, { question: "what now?" }),
  "POST /v1/approvals/{id}": async (r) => v1(r, "POST", `/v1/approvals/${(await suspended()).approvalId}`, { decision: "approve" }),
  // Auditors cannot start runs (and `none` has no user): they are asked about the owner's.
  "POST /v1/approvals/{id} (the caller's own run)": async (r) =>
    v1(r, "POST", `/v1/approvals/${(await suspended(r === "none" || r === "auditor" ? users.owner : users[r])).approvalId}`, { decision: "approve" }),
  "POST /v1/approvals": (r) => v1(r, "POST", "/v1/approvals", { action: "exec", arguments: { command: "make deploy" } }),
  "GET /v1/approvals": (r) => v1(r, "GET", "/v1/approvals?status=pending"),
  "GET /v1/approvals/{id}": async (r) => v1(r, "GET", `/v1/approvals/${(await external("exec")).id}`),
  "POST /v1/approvals/{id} (external)": async (r) => v1(r, "POST", `/v1/approvals/${(await external("exec")).id}`, { decision: "approve" }),
  "POST /v1/approvals/{id}/consume": async (r) => {
    const approved = await external("echo");
    return v1(r, "POST", `/v1/approvals/${approved.id}/consume`, { bindingHash: approved.bindingHash });
  },
  "POST /v1/mcp (initialize)": async (r) => {
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "matrix", version: "1" } } };
    const res = await app.api("/v1/mcp", { key: keyOf(r), body: initialize, headers: { accept: "application/json, text/event-stream" } });
    await res.body?.cancel();
    return res.status;
  },
  "POST /v1/client-tools/{id}": async (r) => v1(r, "POST", `/v1/client-tools/${(await clientTool("get_page_context")).id}`, { output: { url: "https://x.test", title: "X" } }),
  "POST /v1/client-tools/{id} (private input)": async (r) =>
    v1(r, "POST", `/v1/client-tools/${(await clientTool("collect_card_details")).id}`, { output: { number: "4111111111111111", expiry: "12/29", name: "Ada" } }),
  "POST /v1/agui": (r) =>
    v1(r, "POST", "/v1/agui", { threadId: `thread-${r}`, runId: `run-${r}-${Date.now()}`, messages: [{ id: "m1", role: "user", content: "hi" }], tools: [], context: [], state: {}, forwardedProps: {} }),
  "GET /v1/grants": (r) => v1(r, "GET", "/v1/grants"),
  "DELETE /v1/grants/{id}": async (r) => v1(r, "DELETE", `/v1/grants/${await ownerGrant()}`),
  "GET /v1/analytics/decisions": (r) => v1(r, "GET", "/v1/analytics/decisions"),
  "GET /v1/policy/suggestions": (r) => v1(r, "GET", "/v1/policy/suggestions"),
  "POST /v1/policy/suggestions/{id}/apply": (r) => v1(r, "POST", "/v1/policy/suggestions/sug_00000000_0000000000000000/apply", {}),
  "POST /v1/policy/suggestions/{id}/dismiss": (r) => v1(r, "POST", "/v1/policy/suggestions/sug_00000000_0000000000000000/dismiss", {}),
  "POST /v1/policy/simulate": (r) => v1(r, "POST", "/v1/policy/simulate", { file: { agents: [{ name: "m", harness: "scripted", tools: {} }] }, days: 1 }),
  "POST /v1/slack/interactions": (r) => v1(r, "POST", "/v1/slack/interactions", { payload: "{}" }),
  "POST /v1/gateway/question.request": (r) => v1(r, "POST", "/v1/gateway/question.request", { questions: QUESTIONS }),
  "POST /v1/gateway/question.get": (r) => v1(r, "POST", "/v1/gateway/question.get", { id: ownerQuestion }),
  "POST /v1/gateway/question.list": (r) => v1(r, "POST", "/v1/gateway/question.list", {}),
  "POST /v1/gateway/question.waitAnswer": (r) => v1(r, "POST", "/v1/gateway/question.waitAnswer", { id: ownerQuestion, timeoutMs: 1000 }),
  "POST /v1/gateway/question.resolve": async (r) => v1(r, "POST", "/v1/gateway/question.resolve", { id: await question(), answers: { pick: ["a"] } }),
  "WS /v1/live connect": async (r) => {
    const client = await socket(r);
    if (typeof client === "number") return client;
    client.close();
    return "open";
  },
  "WS approval.decision": async (r) => {
    const run = await suspended();
    return frame(r, { type: "approval.decision", responseId: run.id, approvalId: run.approvalId, decision: "approve" }, (c) => c.waitFor((f) => f.type === "approval.resolved"), "resolved");
  },
  "WS client_tool.result": async (r) => {
    const ct = await clientTool("get_page_context");
    return frame(r, { type: "client_tool.result", requestId: ct.id, output: { url: "https://x.test", title: "X" } }, (c) => c.waitFor((f) => f.type === "response.completed" && f.status === "completed"), "completed");
  },
  "WS response.cancel": async (r) => {
    const run = await suspended();
    return frame(r, { type: "response.cancel", responseId: run.id }, (c) => c.waitFor((f) => f.type === "response.completed" && f.status === "cancelled"), "cancelled");
  },
  "WS response.steer": async (r) => {
    const run = await suspended();
    return frame(r, { type: "response.steer", responseId: run.id, text: "also this" }, (c) => c.waitFor((f) => f.type === "steer.queued"), "queued");
  },
  "WS response.subscribe": (r) =>
    frame(r, { type: "response.subscribe", responseId: completed.id, after: -1 }, (c) => c.waitFor((f) => f.type === "response.completed"), "frames"),
};

let deviceCounter = 0;
const caller = (r: TRole) => (r === "none" ? null : { key: users[r].apiKey });
const trpcStatus = async (p: Promise<{ status: number }>) => (await p).status;
async function adminPairing(): Promise<string> {
  const res = await trpcPost(app, { key: users.admin.apiKey }, "devices.createPairing", { name: `matrix-device-${++deviceCounter}-${Date.now()}` });
  return (res.body as { result: { data: { deviceId: string } } }).result.data.deviceId;
}

const TRPC_CELLS: Record<keyof typeof TRPC, (role: TRole) => Promise<TCell>> = {
  me: (r) => trpcStatus(trpcGet(app, caller(r), "me")),
  signInMethods: (r) => trpcStatus(trpcGet(app, caller(r), "signInMethods")),
  "approvals.list": (r) => trpcStatus(trpcGet(app, caller(r), "approvals.list")),
  "approvals.decide": async (r) => {
    const run = await suspended();
    return trpcStatus(trpcPost(app, caller(r), "approvals.decide", { approvalId: run.approvalId, decision: "approve", bindingHash: run.bindingHash }));
  },
  "responses.list": (r) => trpcStatus(trpcGet(app, caller(r), "responses.list")),
  "responses.get": (r) => trpcStatus(trpcGet(app, caller(r), "responses.get", { responseId: completed.id })),
  "responses.steer": async (r) => trpcStatus(trpcPost(app, caller(r), "responses.steer", { responseId: (await suspended()).id, text: "steer" })),
  "responses.askSideQuestion": async (r) => trpcStatus(trpcPost(app, caller(r), "responses.askSideQuestion", { responseId: completed.id, question: "what now?" })),
  "responses.sessionUsage": (r) => trpcStatus(trpcGet(app, caller(r), "responses.sessionUsage", { sessionId: completed.sessionId })),
  "responses.cancel": async (r) => trpcStatus(trpcPost(app, caller(r), "responses.cancel", { responseId: (await suspended()).id })),
  "responses.onFrames": (r) => trpcSubscribe(app, caller(r), "responses.onFrames", { responseId: completed.id }),
  "users.names": (r) => trpcStatus(trpcGet(app, caller(r), "users.names", { ids: [users.owner.userId] })),
  "settings.get": (r) => trpcStatus(trpcGet(app, caller(r), "settings.get")),
  "settings.setLocale": (r) => trpcStatus(trpcPost(app, caller(r), "settings.setLocale", { locale: null })),
  "account.sessions": (r) => trpcStatus(trpcGet(app, caller(r), "account.sessions")),
  "account.endSession": (r) => trpcStatus(trpcPost(app, caller(r), "account.endSession", { id: "login_session_of_nobody" })),
  "settings.setName": (r) => trpcStatus(trpcPost(app, caller(r), "settings.setName", { name: `${r} ${Math.random().toString(36).slice(2, 10)}` })),
  "question.request": (r) => trpcStatus(trpcPost(app, caller(r), "question.request", { questions: QUESTIONS })),
  "question.waitAnswer": (r) => trpcStatus(trpcGet(app, caller(r), "question.waitAnswer", { id: ownerQuestion, timeoutMs: 1000 })),
  "question.resolve": async (r) => trpcStatus(trpcPost(app, caller(r), "question.resolve", { id: await question(), answers: { pick: ["b"] } })),
  "question.get": (r) => trpcStatus(trpcGet(app, caller(r), "question.get", { id: ownerQuestion })),
  "question.context": (r) => trpcStatus(trpcGet(app, caller(r), "question.context", { id: ownerQuestion })),
  "question.list": (r) => trpcStatus(trpcGet(app, caller(r), "question.list")),
  "question.page": (r) => trpcStatus(trpcGet(app, caller(r), "question.page", { status: "all", limit: 5 })),
  // Only who the caller is (the answer page's "answering as"), whatever question it names.
  "question.viewer": (r) => trpcStatus(trpcGet(app, caller(r), "question.viewer", { id: ownerQuestion })),
  "devices.createPairing": (r) => trpcStatus(trpcPost(app, caller(r), "devices.createPairing", { name: `matrix-${r}-${++deviceCounter}` })),
  "devices.list": (r) => trpcStatus(trpcGet(app, caller(r), "devices.list")),
  "devices.page": (r) => trpcStatus(trpcGet(app, caller(r), "devices.page", { limit: 5 })),
  "devices.revoke": async (r) => trpcStatus(trpcPost(app, caller(r), "devices.revoke", { deviceId: await adminPairing() })),
  "sessions.get": (r) => trpcStatus(trpcGet(app, caller(r), "sessions.get", { sessionId: completed.sessionId })),
  "sessions.setAccess": (r) => trpcStatus(trpcPost(app, caller(r), "sessions.setAccess", { sessionId: completed.sessionId, access: "default" })),
  // Only operators and admins grant Full access, their own sessions' and anyone's (issue 14).
  "sessions.setAccess (Full access)": (r) => trpcStatus(trpcPost(app, caller(r), "sessions.setAccess", { sessionId: completed.sessionId, access: "full" })),
  "console.waiting": (r) => trpcStatus(trpcGet(app, caller(r), "console.waiting")),
  "console.onActivity": (r) => trpcSubscribe(app, caller(r), "console.onActivity"),
  "console.usage": (r) => trpcStatus(trpcGet(app, caller(r), "console.usage", { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() })),
  "console.people": (r) => trpcStatus(trpcGet(app, caller(r), "console.people")),
  "analytics.decisions": (r) => trpcStatus(trpcGet(app, caller(r), "analytics.decisions", {})),
  "analytics.requests": (r) => trpcStatus(trpcGet(app, caller(r), "analytics.requests", {})),
  "analytics.outcomes": (r) => trpcStatus(trpcGet(app, caller(r), "analytics.outcomes", {})),
  "analytics.times": (r) => trpcStatus(trpcGet(app, caller(r), "analytics.times", {})),
  "analytics.repeated": (r) => trpcStatus(trpcGet(app, caller(r), "analytics.repeated", {})),
  "analytics.expired": (r) => trpcStatus(trpcGet(app, caller(r), "analytics.expired", {})),
  "policy.suggestions": (r) => trpcStatus(trpcGet(app, caller(r), "policy.suggestions", { days: 14 })),
  "policy.applySuggestion": (r) => trpcStatus(trpcPost(app, caller(r), "policy.applySuggestion", { id: "sug_00000000_0000000000000000", days: 14 })),
  "policy.simulate": (r) => trpcStatus(trpcPost(app, caller(r), "policy.simulate", { file: { agents: [{ name: "m", harness: "scripted", tools: {} }] }, days: 1 })),
  "policy.dismissSuggestion": (r) => trpcStatus(trpcPost(app, caller(r), "policy.dismissSuggestion", { id: "sug_00000000_0000000000000000", days: 14 })),
  "console.agents": (r) => trpcStatus(trpcGet(app, caller(r), "console.agents")),
  "inbox.list": (r) => trpcStatus(trpcGet(app, caller(r), "inbox.list", { status: "pending" })),
  "inbox.context": async (r) => trpcStatus(trpcGet(app, caller(r), "inbox.context", { approvalId: (await suspended()).approvalId })),
  "inbox.files": async (r) => trpcStatus(trpcGet(app, caller(r), "inbox.files", { approvalId: (await suspended()).approvalId })),
  "inbox.decideMany": async (r) => {
    const run = await suspended();
    return trpcStatus(trpcPost(app, caller(r), "inbox.decideMany", { decision: "approve", items: [{ approvalId: run.approvalId, bindingHash: run.bindingHash }] }));
  },
  "audit.responses": (r) => trpcStatus(trpcGet(app, caller(r), "audit.responses", {})),
  "audit.sessions": (r) => trpcStatus(trpcGet(app, caller(r), "audit.sessions", {})),
  "audit.response": (r) => trpcStatus(trpcGet(app, caller(r), "audit.response", { responseId: completed.id })),
  "audit.session": (r) => trpcStatus(trpcGet(app, caller(r), "audit.session", { sessionId: completed.sessionId })),
  "audit.trajectory": (r) => trpcStatus(trpcGet(app, caller(r), "audit.trajectory", { responseId: completed.id })),
  "audit.timeline": (r) => trpcStatus(trpcGet(app, caller(r), "audit.timeline", { responseId: completed.id })),
  "audit.actors": (r) => trpcStatus(trpcGet(app, caller(r), "audit.actors", { responseId: completed.id })),
  "admin.users": (r) => trpcStatus(trpcGet(app, caller(r), "admin.users")),
  "admin.plugins": (r) => trpcStatus(trpcGet(app, caller(r), "admin.plugins")),
  "admin.usersPage": (r) => trpcStatus(trpcGet(app, caller(r), "admin.usersPage", { limit: 5 })),
  "admin.setRole": async (r) => trpcStatus(trpcPost(app, caller(r), "admin.setRole", { userId: (await app.user("member")).userId, role: "operator" })),
  "admin.disableUser": async (r) => trpcStatus(trpcPost(app, caller(r), "admin.disableUser", { userId: (await app.user("member")).userId })),
  "admin.setUserTeams": async (r) => trpcStatus(trpcPost(app, caller(r), "admin.setUserTeams", { userId: (await app.user("member")).userId, teams: ["matrix-team"] })),
  "admin.renameUser": async (r) => trpcStatus(trpcPost(app, caller(r), "admin.renameUser", { userId: (await app.user("member")).userId, name: `Renamed ${Math.random().toString(36).slice(2, 10)}` })),
  "admin.enableUser": async (r) => {
    const { userId } = await app.user("member");
    expect((await trpcPost(app, caller("admin"), "admin.disableUser", { userId })).status).toBe(200);
    return trpcStatus(trpcPost(app, caller(r), "admin.enableUser", { userId }));
  },
  "admin.deleteUser": async (r) => trpcStatus(trpcPost(app, caller(r), "admin.deleteUser", { userId: (await app.user("member")).userId })),
  "admin.offboardUser": async (r) => trpcStatus(trpcPost(app, caller(r), "admin.offboardUser", { userId: (await app.user("member")).userId })),
  "admin.apiKeys": (r) => trpcStatus(trpcGet(app, caller(r), "admin.apiKeys")),
  "admin.agentsConfig": (r) => trpcStatus(trpcGet(app, caller(r), "admin.agentsConfig")),
  "admin.reloadAgents": (r) => trpcStatus(trpcPost(app, caller(r), "admin.reloadAgents", undefined)),
  "admin.apiKeysPage": (r) => trpcStatus(trpcGet(app, caller(r), "admin.apiKeysPage", { limit: 5 })),
  "admin.trail": (r) => trpcStatus(trpcGet(app, caller(r), "admin.trail", { limit: 5 })),
  "admin.trailActors": (r) => trpcStatus(trpcGet(app, caller(r), "admin.trailActors")),
  "admin.createApiKey": (r) => trpcStatus(trpcPost(app, caller(r), "admin.createApiKey", { name: `matrix ${r}` })),
  "admin.createApiKey (for the owner)": (r) => trpcStatus(trpcPost(app, caller(r), "admin.createApiKey", { name: `for owner by ${r}`, userId: users.owner.userId })),
  "admin.revokeApiKey (the owner's key)": async (r) => {
    const { id } = await createApiKey(app.deps.db, users.owner.userId, `to revoke by ${r}`);
    return trpcStatus(trpcPost(app, caller(r), "admin.revokeApiKey", { keyId: id }));
  },
  "grants.list": (r) => trpcStatus(trpcGet(app, caller(r), "grants.list")),
  "grants.page": (r) => trpcStatus(trpcGet(app, caller(r), "grants.page", { status: "all", limit: 5 })),
  "grants.revoke": async (r) => trpcStatus(trpcPost(app, caller(r), "grants.revoke", { grantId: await ownerGrant() })),
  "notifications.list": (r) => trpcStatus(trpcGet(app, caller(r), "notifications.list", { limit: 5 })),
  "notifications.attempts": (r) => trpcStatus(trpcGet(app, caller(r), "notifications.attempts", { notificationId: "notif_none" })),
  "notifications.channels": (r) => trpcStatus(trpcGet(app, caller(r), "notifications.channels")),
  "link.get (unknown token)": (r) => trpcStatus(trpcGet(app, caller(r), "link.get", { token: "A".repeat(43) })),
  "link.decide (unknown token)": (r) => trpcStatus(trpcPost(app, caller(r), "link.decide", { token: "A".repeat(43), decision: "approve" })),
  "link.answer (unknown token)": (r) => trpcStatus(trpcPost(app, caller(r), "link.answer", { token: "A".repeat(43), answers: { env: ["prod"] } })),
};

/** Runs every cell of a table; returns the observed table. */
async function observe(cells: Record<string, (role: TRole) => Promise<TCell>>): Promise<Record<string, TRow>> {
  const seen: Record<string, TRow> = {};
  for (const [name, run] of Object.entries(cells)) {
    const row: TCell[] = [];
    for (const role of ROLES) row.push(await run(role));
    seen[name] = row as TRow;
  }
  return seen;
}

describe(`authorization matrix (${testDbKind()})`, () => {
  test("the tables cover every /v1 route, every gateway method and every tRPC procedure", () => {
    // Routes as the /v1 table serves them: a new route fails here until it has a row.
    const declared = V1_ROUTES.map((r) => ({ method: r.method, pattern: r.pattern }));
    expect(declared.length).toBeGreaterThan(5);
    const samples: Record<string, string> = {
      "GET /v1/healthz": "/v1/healthz",
      "GET /v1/openapi.json": "/v1/openapi.json",
      "GET /v1/readyz": "/v1/readyz",
      "GET /metrics": "/metrics",
      "POST /v1/responses": "/v1/responses",
      "GET /v1/responses/{id}?sessionId=": "/v1/responses/x",
      "GET /v1/responses/{id}/events?sessionId=": "/v1/responses/x/events",
      "GET /v1/responses/{id}/attachments/{attachmentId}": "/v1/responses/x/attachments/y",
      "POST /v1/responses/{id}/cancel": "/v1/responses/x/cancel",
      "POST /v1/responses/{id}/steer": "/v1/responses/x/steer",
      "POST /v1/responses/{id}/side_questions": "/v1/responses/x/side_questions",
      "POST /v1/approvals/{id}": "/v1/approvals/x",
      "POST /v1/approvals": "/v1/approvals",
      "POST /v1/mcp (initialize)": "/v1/mcp",
      "GET /v1/approvals": "/v1/approvals",
      "GET /v1/approvals/{id}": "/v1/approvals/x",
      "POST /v1/approvals/{id}/consume": "/v1/approvals/x/consume",
      "POST /v1/client-tools/{id}": "/v1/client-tools/x",
      "POST /v1/agui": "/v1/agui",
      "GET /v1/grants": "/v1/grants",
      "DELETE /v1/grants/{id}": "/v1/grants/x",
      "GET /v1/analytics/decisions": "/v1/analytics/decisions",
      "GET /v1/policy/suggestions": "/v1/policy/suggestions",
      "POST /v1/policy/suggestions/{id}/apply": "/v1/policy/suggestions/x/apply",
      "POST /v1/policy/suggestions/{id}/dismiss": "/v1/policy/suggestions/x/dismiss",
      "POST /v1/policy/simulate": "/v1/policy/simulate",
      "POST /v1/gateway/question.request": "/v1/gateway/question.request",
      "POST /v1/slack/interactions": "/v1/slack/interactions",
    };
    for (const route of declared) {
      const covered = Object.entries(samples).some(([name, path]) => name.startsWith(`${route.method} `) && route.pattern.test(path));
      expect(covered, `no matrix row for ${route.method} ${route.pattern}`).toBe(true);
    }
    for (const method of Object.keys(GATEWAY_METHODS)) expect(Object.keys(V1), `gateway method ${method}`).toContain(`POST /v1/gateway/${method}`);
    const procedures = Object.keys((appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures).sort();
    // Rows are named after their procedure, with an optional " (variant)".
    expect(procedures).toEqual([...new Set(Object.keys(TRPC).map((name) => name.replace(/ \(.*\)$/, "")))].sort());
  });

  test("/v1 routes and WebSocket frames: every role gets the status in the table", async () => {
    expect(await observe(V1_CELLS)).toEqual(V1);
  }, 240_000);

  test("tRPC procedures: every role gets the status in the table", async () => {
    expect(await observe(TRPC_CELLS)).toEqual(TRPC);
  }, 240_000);

  test("object level: another member's ids answer exactly like ids that do not exist", async () => {
    const run = await suspended();
    const ct = await clientTool("get_page_context");
    const q = await question();
    const FAKE = { resp: "resp_00000000000000000000000000000000", approval: "approval_00000000000000000000000000000000", ct: "client_tool_00000000000000000000000000000000", ask: "ask_00000000000000000000000000000000" };
    // [real id, fake id, (id) => [path, body?]]
    const cases: Array<[string, string, (id: string) => [string, unknown?]]> = [
      [run.id, FAKE.resp, (id) => [`/v1/responses/${id}?sessionId=${run.sessionId}`]],
      [run.id, FAKE.resp, (id) => [`/v1/responses/${id}/events?sessionId=${run.sessionId}`]],
      [run.id, FAKE.resp, (id) => [`/v1/responses/${id}/cancel`, {}]],
      [run.id, FAKE.resp, (id) => [`/v1/responses/${id}/steer`, { text: "x" }]],
      [run.approvalId, FAKE.approval, (id) => [`/v1/approvals/${id}`, { decision: "approve" }]],
      [ct.id, FAKE.ct, (id) => [`/v1/client-tools/${id}`, { output: { url: "u", title: "t" } }]],
      [q, FAKE.ask, (id) => ["/v1/gateway/question.get", { id }]],
      [q, FAKE.ask, (id) => ["/v1/gateway/question.resolve", { id, answers: { pick: ["a"] } }]],
    ];
    for (const [real, fake, request] of cases) {
      const send = async (id: string) => {
        const [path, body] = request(id);
        const res = await app.api(path, { key: users.member.apiKey, body, method: body === undefined ? "GET" : "POST" });
        return { status: res.status, text: (await res.text()).split(id).join("<id>") };
      };
      expect(await send(real), request(real)[0]).toEqual(await send(fake));
    }
    // Nothing was consumed by those attempts.
    const [row] = await app.deps.db.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, run.approvalId));
    expect(row?.status).toBe("pending");
  });

  test("object level: lists never show another member's objects; read-all roles see them", async () => {
    const run = await suspended();
    const q = await question();
    const ids = async (role: TRole) => {
      const c = caller(role);
      const a = (await trpcGet(app, c, "approvals.list")).body as { result: { data: Array<{ id: string }> } };
      const r = (await trpcGet(app, c, "responses.list")).body as { result: { data: Array<{ id: string }> } };
      const g = (await v1(role, "POST", "/v1/gateway/question.list", {})) === 200 ? await (await app.api("/v1/gateway/question.list", { key: keyOf(role), body: {} })).json() : null;
      return [...a.result.data.map((x) => x.id), ...r.result.data.map((x) => x.id), ...((g as { payload: { questions: Array<{ id: string }> } } | null)?.payload.questions.map((x) => x.id) ?? [])];
    };
    expect(await ids("member")).not.toEqual(expect.arrayContaining([run.approvalId]));
    expect(await ids("member")).not.toEqual(expect.arrayContaining([run.id]));
    expect(await ids("member")).not.toEqual(expect.arrayContaining([q]));
    for (const role of ["owner", "admin", "operator", "auditor"] as const) expect(await ids(role), role).toEqual(expect.arrayContaining([run.approvalId, run.id, q]));
  });
});
