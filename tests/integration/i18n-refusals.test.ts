import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { BUILTIN_AGENTS } from "../../server/agents/catalog";
import type { TExecReviewer } from "../../server/reviewer";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, execTurn, expectError, invoke, ok200, script } from "./helpers";
import { gwOk, pick } from "./questions-helpers";
import { trpcGet, trpcPost } from "./security-helpers";
import { approvalRow, type TApprovalAction } from "./separation-helpers";

/**
 * Issue 15 point 10: the refusals the console and the answer page used to show in English only
 * carry a reason code (`serverText` of the tRPC error), which the console words in the viewer's
 * language (i18n/server-text.test.ts checks every code's wording). Each is provoked here through
 * the console's own procedures; the `/v1` error body keeps the contract's exact `{detail, code}`.
 */

/** Denies an edit that deletes; asks a person about anything else. */
const reviewer: TExecReviewer = {
  name: "test-reviewer",
  review: async (request) =>
    /\brm\b/.test(request.command)
      ? { decision: "deny", risk: "high", guidance: "Do not delete files.", rationale: "It deletes files", reviewer: "test-reviewer", latencyMs: 1 }
      : { decision: "ask", risk: "medium", rationale: "A person should look at this", reviewer: "test-reviewer", latencyMs: 1 },
};

const MEMBER = "Mei Member";
const OPERATOR = "Otto Operator";

let app: TTestApp;
let admin: TTestUser;
let member: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;

beforeAll(async () => {
  app = await startTestApp({ reviewer });
  [admin, member, operator, auditor] = [await app.user("admin"), await app.user("member", MEMBER), await app.user("operator", OPERATOR), await app.user("auditor")];
});
afterAll(async () => {
  await app?.close();
});

type TRefusal = { status: number; message: string | undefined; serverText: { code: string; params?: Record<string, unknown> } | null | undefined };

const refusalOf = ({ status, body }: { status: number; body: Record<string, unknown> }): TRefusal => {
  const error = body.error as { message?: string; data?: { serverText?: TRefusal["serverText"] } } | undefined;
  expect(error, JSON.stringify(body)).toBeDefined();
  return { status, message: error?.message, serverText: error?.data?.serverText };
};
const post = async (user: TTestUser, path: string, input: unknown) => refusalOf(await trpcPost(app, { key: user.apiKey }, path, input));
const get = async (user: TTestUser, path: string, input?: unknown) => refusalOf(await trpcGet(app, { key: user.apiKey }, path, input));
const data = async <T>(user: TTestUser, path: string, input: unknown): Promise<T> => {
  const { status, body } = await trpcPost(app, { key: user.apiKey }, path, input);
  expect(status, JSON.stringify(body)).toBe(200);
  return (body.result as { data: T }).data;
};

describe(`refusals carry a reason code the console words in the viewer's language (${testDbKind()})`, () => {
  it("admin-only and role 403s, on the Admin page's procedures and the devices'", async () => {
    const cases: Array<[TTestUser, "get" | "post", string, unknown, TRefusal["serverText"]]> = [
      [member, "post", "admin.setRole", { userId: operator.userId, role: "admin" }, { code: "roleCannot", params: { act: "administer" } }],
      [operator, "post", "admin.deleteUser", { userId: member.userId }, { code: "roleCannot", params: { act: "administer" } }],
      [member, "get", "admin.users", undefined, { code: "roleCannot", params: { act: "readWorkspace" } }],
      [member, "get", "admin.trail", {}, { code: "roleCannot", params: { act: "readTrail" } }],
      [operator, "get", "admin.agentsConfig", undefined, { code: "roleCannot", params: { act: "readConfig" } }],
      [auditor, "post", "admin.createApiKey", { name: "mine" }, { code: "roleCannot", params: { act: "change" } }],
      [member, "post", "admin.createApiKey", { name: "theirs", userId: operator.userId }, { code: "adminOnly", params: { act: "createKeysForOthers" } }],
      [operator, "post", "devices.createPairing", { name: "build-box" }, { code: "adminOnly", params: { act: "pairDevices" } }],
      [operator, "post", "devices.revoke", { deviceId: "dev_nothing" }, { code: "adminOnly", params: { act: "revokeDevices" } }],
      [member, "get", "devices.page", {}, { code: "roleCannot", params: { act: "seeDevices" } }],
      [auditor, "post", "question.request", { questions: [pick()] }, { code: "auditorReadOnly", params: { act: "askQuestions" } }],
    ];
    for (const [user, method, path, input, serverText] of cases) {
      const refusal = method === "get" ? await get(user, path, input) : await post(user, path, input);
      expect(refusal.status, `${user.email} ${path}`).toBe(403);
      expect(refusal.serverText, `${user.email} ${path}`).toEqual(serverText);
    }
  });

  it("session access: an auditor changes nothing, a member grants no Full access", async () => {
    const env = await invoke(app, member.apiKey, script([{ text: "hi" }]));
    const sessionId = env.sessionId as string;
    expect((await post(auditor, "sessions.setAccess", { sessionId, access: "full" })).serverText).toEqual({ code: "auditorReadOnly", params: { act: "changeAccess" } });
    const own = await post(member, "sessions.setAccess", { sessionId, access: "full" });
    expect(own.status).toBe(403);
    expect(own.serverText).toEqual({ code: "rolesOnly", params: { act: "grantFullAccess" } });
  });

  it("the Admin page's 409s: own role and account, deleted users, a user's status, revoked keys and devices", async () => {
    const conflict = async (path: string, input: unknown, serverText: TRefusal["serverText"], user = admin) => {
      const refusal = await post(user, path, input);
      expect(refusal.status, path).toBe(409);
      expect(refusal.serverText, path).toEqual(serverText);
      return refusal;
    };
    const own = await conflict("admin.setRole", { userId: admin.userId, role: "member" }, { code: "ownAccount", params: { change: "role" } });
    // The English sentence stays the detail, for API clients and logs.
    expect(own.message).toBe("You cannot change your own role; ask another admin.");
    await conflict("admin.disableUser", { userId: admin.userId }, { code: "ownAccount", params: { change: "disable" } });
    await conflict("admin.deleteUser", { userId: admin.userId }, { code: "ownAccount", params: { change: "delete" } });

    const gone = await app.user("member");
    const name = (await data<{ name: string }>(admin, "admin.deleteUser", { userId: gone.userId })).name;
    await conflict("admin.setRole", { userId: gone.userId, role: "operator" }, { code: "userDeleted", params: { name, change: "role" } });
    await conflict("admin.createApiKey", { name: "late", userId: gone.userId }, { code: "userDeleted", params: { name, change: "keys" } });
    await conflict("admin.enableUser", { userId: gone.userId }, { code: "userDeleted", params: { name, change: "enable" } });
    await conflict("admin.deleteUser", { userId: gone.userId }, { code: "userDeleted", params: { name, change: "delete" } });

    const paused = await app.user("operator");
    const pausedName = (await data<{ name: string }>(admin, "admin.disableUser", { userId: paused.userId })).name;
    await conflict("admin.disableUser", { userId: paused.userId }, { code: "userStatusIs", params: { name: pausedName, status: "disabled" } });
    await conflict("admin.enableUser", { userId: operator.userId }, { code: "userStatusIs", params: { name: OPERATOR, status: "active" } });

    const key = await data<{ id: string }>(member, "admin.createApiKey", { name: "short-lived" });
    await data(member, "admin.revokeApiKey", { keyId: key.id });
    await conflict("admin.revokeApiKey", { keyId: key.id }, { code: "keyRevoked" }, member);

    const pairing = await data<{ deviceId: string }>(admin, "devices.createPairing", { name: "i18n-box" });
    await conflict("devices.createPairing", { name: "i18n-box" }, { code: "deviceNameTaken", params: { name: "i18n-box" } });
    await data(admin, "devices.revoke", { deviceId: pairing.deviceId });
    await conflict("devices.revoke", { deviceId: pairing.deviceId }, { code: "deviceRevoked", params: { name: "i18n-box" } });
  });

  it("a request-shape 400 names its field (zod's own words stay in the message)", async () => {
    const empty = await post(member, "admin.createApiKey", { name: "" });
    expect(empty.status).toBe(400);
    expect(empty.serverText).toEqual({ code: "invalidField", params: { field: "name", issue: expect.any(String) } });
    const extra = await post(admin, "admin.setRole", { userId: member.userId, role: "member", also: "everything" });
    expect(extra.status).toBe(400);
    expect(extra.serverText).toMatchObject({ code: "invalidField", params: { field: "also" } });
    const role = await post(admin, "admin.setRole", { userId: member.userId, role: "overlord" });
    expect(role.serverText).toMatchObject({ code: "invalidField", params: { field: "role" } });
  });

  it("the exec reviewer's denial of an edit carries its code, the risk and the reviewer's words", async () => {
    // This built-in agent asks the exec reviewer first, so an edit of its approvals is reviewed again.
    expect(BUILTIN_AGENTS.find((a) => a.name === "scripted-reviewed")?.approval).toMatchObject({ exec: "review" });
    const env = await invoke(app, operator.apiKey, script([execTurn("ls"), { text: "done" }]), { agent: "scripted-reviewed" });
    expect(env.status).toBe("requires_action");
    const approval = env.requiredAction as TApprovalAction;
    const row = await approvalRow(app, approval.id);
    const refusal = await post(operator, "approvals.decide", { approvalId: approval.id, decision: "approve", bindingHash: row?.bindingHash, arguments: { command: "rm -rf ." } });
    expect(refusal.status).toBe(422);
    expect(refusal.serverText).toEqual({ code: "editReviewDenied", params: { risk: "high", rationale: "It deletes files" }, reviewer: null });
    expect(refusal.message).toBe("The exec reviewer denied the edited operation (high risk): It deletes files. Nothing was approved; the request is still pending.");
    expect((await approvalRow(app, approval.id))?.status).toBe("pending");

    // An edit whose working directory leaves the session workspace: its own code, why and the path as written.
    const outside = await post(operator, "approvals.decide", { approvalId: approval.id, decision: "approve", bindingHash: row?.bindingHash, arguments: { command: "ls", cwd: "/etc" } });
    expect(outside.status).toBe(422);
    expect(outside.serverText).toEqual({ code: "editCwdRefused", params: { why: "outside", cwd: '"/etc"' } });
    expect(outside.message).toBe('The working directory "/etc" is outside the session workspace; commands run only inside it. Nothing was approved.');
    expect((await approvalRow(app, approval.id))?.status).toBe("pending");
  });

  it("the answer page's question errors: an invalid answer, a settled question, an unknown one", async () => {
    const { id } = await gwOk<{ id: string }>(app, member.apiKey, "question.request", { questions: [pick()] });
    const invalid = await post(member, "question.resolve", { id, answers: { color: ["green"] } });
    expect(invalid.status).toBe(422);
    expect(invalid.serverText).toEqual({ code: "answerInvalid", params: { key: "color", message: invalid.message } });
    const unknown = await post(member, "question.resolve", { id, answers: { colour: ["blue"] } });
    expect(unknown.serverText).toMatchObject({ code: "answerInvalid", params: { key: "colour" } });
    await data(member, "question.resolve", { id, answers: { color: ["blue"] } });
    const again = await post(member, "question.resolve", { id, answers: { color: ["blue"] } });
    expect(again.status).toBe(409);
    // Who answered first, with the email beside the name.
    expect(again.serverText).toEqual({ code: "questionSettled", params: { status: "answered", by: `${MEMBER} (${member.email})` } });
    const missing = await get(member, "question.get", { id: "q_nothing_here" });
    expect(missing.status).toBe(404);
    expect(missing.serverText).toEqual({ code: "questionNotFound", params: { id: "q_nothing_here" } });
    // Every other 404 names its kind and id by one code, worded per kind.
    const noResponse = await get(member, "audit.response", { responseId: "resp_nothing_here" });
    expect(noResponse.status).toBe(404);
    expect(noResponse.message).toBe("No response with id resp_nothing_here was found.");
    expect(noResponse.serverText).toEqual({ code: "notFound", params: { what: "response", id: "resp_nothing_here" } });
  });

  it("a /v1 error body stays exactly the contract's {detail, code}: the reason code is the console's (tRPC), never an extra field", async () => {
    const auditorRun = await expectError(await app.api("/v1/responses", { key: auditor.apiKey, body: { input: "hi" } }), 403, "forbidden");
    expect(auditorRun.detail).toBe("Auditors can read trajectories but cannot invoke agents.");
    const env = await invoke(app, operator.apiKey, script([execTurn("echo once"), { text: "done" }]));
    const approval = env.requiredAction as TApprovalAction;
    await ok200(await decide(app, operator.apiKey, approval.id, "deny"));
    const again = await decide(app, operator.apiKey, approval.id, "deny");
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ detail: expect.any(String), code: "already_decided" });
  });
});
