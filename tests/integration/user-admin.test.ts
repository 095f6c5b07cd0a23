import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { decide, invokeApproval, ok200, rows } from "./helpers";
import { signIn, trpcGet, trpcPost } from "./security-helpers";

/**
 * Point 10 of issue 14 through tRPC (the console's Admin page): admins disable, enable and delete
 * users; their keys and console sessions stop at once; deleted users' history still names them;
 * every change is in the audit log. The CLI side is in cli-users.test.ts.
 */

let app: TTestApp;
let admin: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.user("admin");
});
afterAll(async () => {
  await app?.close();
});

type TUserRow = { id: string; name: string; email: string; role: string; status: string; activeKeys: number };
/** The admin acting through the console's procedures (its API key as a Bearer token). */
const asAdmin = () => ({ key: admin.apiKey });

const usersList = async (): Promise<TUserRow[]> => ((await trpcGet(app, asAdmin(), "admin.users")).body as { result: { data: TUserRow[] } }).result.data;
const statusOf = async (userId: string) => (await usersList()).find((u) => u.id === userId)?.status;
/** The trail rows of the admin actions on a target (its creation by the fixture is a row too, proved in admin-trail.test.ts). */
const audit = (targetId: string) =>
  rows<{ action: string; actor_user_id: string | null; data: Record<string, unknown> }>(app, `select action, actor_user_id, data from audit_log where target_id = '${targetId}' and action <> 'user.created' order by at, id`);
const errorMessage = (body: Record<string, unknown>): string => (body as { error: { message: string } }).error.message;

const signInStatus = async (user: TTestUser) => {
  const res = await fetch(`${app.url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: app.url },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  return { status: res.status, text: await res.text() };
};
const keyWorks = async (key: string) => (await app.api("/v1/grants", { key })).status;

describe(`users are disabled, enabled and deleted by admins (${testDbKind()})`, () => {
  it("only an admin may, never on itself; bad input is refused and changes nothing", async () => {
    const target = await app.user("member");
    for (const role of ["member", "operator", "auditor"] as const) {
      const caller = await app.user(role);
      for (const path of ["admin.disableUser", "admin.enableUser", "admin.deleteUser"]) {
        expect((await trpcPost(app, { key: caller.apiKey }, path, { userId: target.userId })).status, `${role} ${path}`).toBe(403);
      }
    }
    const self = await trpcPost(app, asAdmin(), "admin.disableUser", { userId: admin.userId });
    expect(self.status).toBe(409);
    expect(errorMessage(self.body)).toBe("You cannot disable your own account; ask another admin.");
    expect((await trpcPost(app, asAdmin(), "admin.deleteUser", { userId: admin.userId })).status).toBe(409);
    expect((await trpcPost(app, asAdmin(), "admin.disableUser", { userId: "user_nobody" })).status).toBe(404);
    expect((await trpcPost(app, asAdmin(), "admin.disableUser", { userId: "" })).status).toBe(400);
    expect((await trpcPost(app, asAdmin(), "admin.deleteUser", { userId: target.userId, also: "everything" })).status).toBe(400);
    expect(await statusOf(target.userId)).toBe("active");
    expect(await statusOf(admin.userId)).toBe("active");
    expect(await audit(target.userId)).toEqual([]);
    expect(await keyWorks(target.apiKey)).toBe(200);
  });

  it("disabled: API 401, console session gone, login refused with a clear sentence; enabled again, the key and password work", async () => {
    const user = await app.user("operator");
    const cookie = await signIn(app, user);
    expect((await trpcGet(app, { cookie }, "me")).status).toBe(200);

    const disabled = await trpcPost(app, asAdmin(), "admin.disableUser", { userId: user.userId });
    expect((disabled.body as { result: { data: unknown } }).result.data).toEqual({ userId: user.userId, name: expect.any(String), status: "disabled" });
    expect(await keyWorks(user.apiKey)).toBe(401);
    expect((await trpcGet(app, { key: user.apiKey }, "me")).status).toBe(401);
    expect((await trpcGet(app, { cookie }, "me")).status).toBe(401);
    const login = await signInStatus(user);
    expect(login.status).toBe(403);
    expect(login.text).toContain("This account is disabled; ask an admin to enable it again.");
    expect(await statusOf(user.userId)).toBe("disabled");
    const again = await trpcPost(app, asAdmin(), "admin.disableUser", { userId: user.userId });
    expect(again.status).toBe(409);
    expect(errorMessage(again.body)).toMatch(/is already disabled\.$/);

    expect((await trpcPost(app, asAdmin(), "admin.enableUser", { userId: user.userId })).status).toBe(200);
    expect(await keyWorks(user.apiKey)).toBe(200);
    expect((await signInStatus(user)).status).toBe(200);
    // The session that was open when the user was disabled stays ended: signing in again is required.
    expect((await trpcGet(app, { cookie }, "me")).status).toBe(401);
    expect((await trpcPost(app, asAdmin(), "admin.enableUser", { userId: user.userId })).status).toBe(409);
    expect((await audit(user.userId)).map((a) => [a.action, a.actor_user_id])).toEqual([
      ["user.disabled", admin.userId],
      ["user.enabled", admin.userId],
    ]);
  });

  it("deleted: credentials gone for good, the email free again, and its past decisions still show its name", async () => {
    const name = `Deleted Operator ${Date.now()}`;
    const user = await app.user("operator", name);
    const member = await app.user("member");
    const { env, approval } = await invokeApproval(app, member.apiKey, "echo approved-by-deleted");
    await ok200(await decide(app, user.apiKey, approval.id, "approve"));

    const deleted = await trpcPost(app, asAdmin(), "admin.deleteUser", { userId: user.userId });
    expect((deleted.body as { result: { data: unknown } }).result.data).toEqual({ userId: user.userId, name, status: "deleted" });
    expect(await keyWorks(user.apiKey)).toBe(401);
    expect((await signInStatus(user)).status).toBe(401);
    for (const [path, input] of [
      ["admin.enableUser", { userId: user.userId }],
      ["admin.disableUser", { userId: user.userId }],
      ["admin.deleteUser", { userId: user.userId }],
      ["admin.setRole", { userId: user.userId, role: "admin" }],
      ["admin.createApiKey", { userId: user.userId, name: "revive" }],
    ] as const) {
      expect((await trpcPost(app, asAdmin(), path, input)).status, path).toBe(409);
    }
    const row = (await usersList()).find((u) => u.id === user.userId) as TUserRow;
    expect(row).toMatchObject({ name, role: "operator", status: "deleted", activeKeys: 0 });
    expect(row.email).not.toBe(user.email);
    expect(await rows(app, `select id from accounts where user_id = '${user.userId}' union all select id from login_sessions where user_id = '${user.userId}'`)).toEqual([]);

    // History stays auditable and still shows who decided.
    const decided = (await trpcGet(app, asAdmin(), "approvals.list", { status: "decided" })).body as { result: { data: Array<{ id: string; decidedBy: string | null }> } };
    expect(decided.result.data.find((a) => a.id === approval.id)?.decidedBy).toBe(user.userId);
    // Beside its name, the address its email was replaced with says it was deleted.
    const deletedAs = { name, email: `deleted+${user.userId.toLowerCase()}@deleted.invalid` };
    const names = (await trpcGet(app, asAdmin(), "users.names", { ids: [user.userId] })).body as { result: { data: Record<string, { name: string; email: string }> } };
    expect(names.result.data[user.userId]).toEqual(deletedAs);
    const actors = (await trpcGet(app, asAdmin(), "audit.actors", { responseId: env.id })).body as { result: { data: Array<{ id: string; name: string; email: string }> } };
    expect(actors.result.data).toContainEqual({ id: user.userId, ...deletedAs });
    expect((await audit(user.userId)).map((a) => a.action)).toEqual(["user.deleted"]);

    // The email can be used again: a new user of the same name (and so the same default email).
    const successor = await app.user("member", name);
    expect(successor.email).toBe(user.email);
    expect(await keyWorks(successor.apiKey)).toBe(200);
  });

  it("role changes and key revocations are written to the audit log", async () => {
    const user = await app.user("member");
    expect((await trpcPost(app, asAdmin(), "admin.setRole", { userId: user.userId, role: "operator" })).status).toBe(200);
    const keys = (await trpcGet(app, asAdmin(), "admin.apiKeys")).body as { result: { data: Array<{ id: string; userId: string }> } };
    const keyId = (keys.result.data.find((k) => k.userId === user.userId) as { id: string }).id;
    expect((await trpcPost(app, asAdmin(), "admin.revokeApiKey", { keyId })).status).toBe(200);
    expect(await audit(user.userId)).toEqual([{ action: "user.role_changed", actor_user_id: admin.userId, data: expect.objectContaining({ from: "member", to: "operator" }) }]);
    expect(await audit(keyId)).toEqual([{ action: "api_key.revoked", actor_user_id: admin.userId, data: expect.objectContaining({ userId: user.userId }) }]);
  });
});
