import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startControlServer } from "../../server/api/http/control";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { cli, json } from "./cli-helpers";
import { invokeApproval } from "./helpers";
import { trpcGet, trpcPost } from "./security-helpers";

/**
 * Point 7 of issue 20: every administrative action, through its public surface (tRPC, `/v1`, the
 * CLI through the running server's control socket), writes exactly one admin-trail row in its
 * transaction, read back through `admin.trail`: who, what, when, from where, never a secret. Admins
 * and auditors read it (and export it as JSONL); members and operators get 403; the table refuses
 * UPDATE, DELETE and TRUNCATE; the pages are keyset pages.
 */

type TRow = { id: string; at: string; actorUserId: string | null; osUser: string | null; channel: string; clientIp: string | null; action: string; targetType: string; targetId: string; detail: Record<string, unknown> };
type TPage = { rows: TRow[]; nextCursor: string | null };

let app: TTestApp;
let admin: TTestUser;
let auditor: TTestUser;
let operator: TTestUser;
let member: TTestUser;
let control: Awaited<ReturnType<typeof startControlServer>>;

beforeAll(async () => {
  app = await startTestApp();
  control = await startControlServer(app.deps, app.dataDir);
  [admin, auditor, operator, member] = await Promise.all([app.user("admin"), app.user("auditor"), app.user("operator"), app.user("member")]);
}, 60_000);
afterAll(async () => {
  await control?.close();
  await app?.close();
});

const ok = async (res: Promise<{ status: number; body: Record<string, unknown> }>) => {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as { result: { data: Record<string, unknown> } }).result.data;
};
const post = (key: string, path: string, input: unknown) => ok(trpcPost(app, { key }, path, input));
const trail = async (key: string, input: Record<string, unknown> = {}) => (await ok(trpcGet(app, { key }, "admin.trail", { limit: 200, ...input }))) as unknown as TPage;

/** The trail rows of one action on one target, read as the auditor. */
const rowsOf = async (action: string, targetId: string) => (await trail(auditor.apiKey, { action })).rows.filter((r) => r.targetId === targetId);

describe(`the admin trail (${testDbKind()})`, () => {
  test("every admin action over tRPC and /v1 writes exactly one row: who, what, from where, no secret", async () => {
    const target = await app.user("member");
    const expectOne = async (action: string, targetId: string, channel = "console") => {
      const rows = await rowsOf(action, targetId);
      expect(rows, `${action} ${targetId}`).toHaveLength(1);
      const row = rows[0] as TRow;
      expect(row.channel).toBe(channel);
      expect(row.clientIp).toMatch(/^(127\.0\.0\.1|::1)$/);
      return row;
    };

    await post(admin.apiKey, "admin.setRole", { userId: target.userId, role: "operator" });
    const roleRow = await expectOne("user.role_changed", target.userId);
    expect(roleRow.actorUserId).toBe(admin.userId);
    expect(roleRow.detail).toMatchObject({ from: "member", to: "operator" });
    // Setting the role it already has changes and records nothing.
    await post(admin.apiKey, "admin.setRole", { userId: target.userId, role: "operator" });
    await expectOne("user.role_changed", target.userId);

    await post(admin.apiKey, "admin.disableUser", { userId: target.userId });
    await expectOne("user.disabled", target.userId);
    await post(admin.apiKey, "admin.enableUser", { userId: target.userId });
    await expectOne("user.enabled", target.userId);

    const key = (await post(admin.apiKey, "admin.createApiKey", { name: "for the trail", userId: target.userId })) as { id: string; apiKey: string };
    expect((await expectOne("api_key.created", key.id)).detail).toEqual({ userId: target.userId, name: "for the trail" });
    await post(admin.apiKey, "admin.revokeApiKey", { keyId: key.id });
    await expectOne("api_key.revoked", key.id);

    const device = (await post(admin.apiKey, "devices.createPairing", { name: `trail-${Date.now()}` })) as { deviceId: string; token: string };
    await expectOne("device.pairing_created", device.deviceId);
    await post(admin.apiKey, "devices.revoke", { deviceId: device.deviceId });
    await expectOne("device.revoked", device.deviceId);

    // Standing grants: revoked in the console (tRPC) and over /v1 (channel v1).
    const grantOf = async () => {
      const run = await invokeApproval(app, member.apiKey, `echo trail-${Math.random()}`);
      const res = await app.api(`/v1/approvals/${run.approval.id}`, { key: operator.apiKey, body: { decision: "approve", grant: "session" } });
      return { grantId: ((await res.json()) as { grantId: string }).grantId, sessionId: run.env.sessionId };
    };
    const [viaConsole, viaV1] = [await grantOf(), await grantOf()];
    await post(operator.apiKey, "grants.revoke", { grantId: viaConsole.grantId });
    expect((await expectOne("grant.revoked", viaConsole.grantId)).actorUserId).toBe(operator.userId);
    expect((await app.api(`/v1/grants/${viaV1.grantId}`, { method: "DELETE", key: member.apiKey })).status).toBe(200);
    expect((await expectOne("grant.revoked", viaV1.grantId, "v1")).actorUserId).toBe(member.userId);

    // Full access to a session, granted and revoked.
    await post(operator.apiKey, "sessions.setAccess", { sessionId: viaConsole.sessionId, access: "full" });
    await expectOne("session.access.grant", viaConsole.sessionId);
    await post(operator.apiKey, "sessions.setAccess", { sessionId: viaConsole.sessionId, access: "default" });
    await expectOne("session.access.revoke", viaConsole.sessionId);

    await post(admin.apiKey, "admin.deleteUser", { userId: target.userId });
    await expectOne("user.deleted", target.userId);

    // A refused action changes nothing and records nothing.
    expect((await trpcPost(app, { key: admin.apiKey }, "admin.deleteUser", { userId: admin.userId })).status).toBe(409);
    expect(await rowsOf("user.deleted", admin.userId)).toHaveLength(0);

    // "Configuration reloaded" is proved through admin.reloadAgents in agents-config.test.ts.

    // No key material anywhere in the trail.
    const all = JSON.stringify((await trail(admin.apiKey)).rows);
    expect(all).not.toContain(key.apiKey);
    expect(all).not.toContain(device.token);
    expect(all).not.toContain(target.password);
  }, 120_000);

  test("the CLI's actions (through the running server) are rows of channel cli with the OS user", async () => {
    const run = (...args: string[]) => cli(app.dataDir, undefined, args);
    const added = json(await run("user", "add", "Trail Cli", "--role", "operator", "--password", "trail-cli-password", "--json")) as { userId: string; apiKey: string; database: string };
    expect(added.database).toContain("through the running server");
    const [created] = await rowsOf("user.created", added.userId);
    expect(created).toMatchObject({ channel: "cli", actorUserId: null, clientIp: null, detail: { name: "Trail Cli", role: "operator", signIn: true } });
    expect(created?.osUser).toMatch(/\S/);
    expect(JSON.stringify(created)).not.toContain(added.apiKey);
    expect(JSON.stringify(created)).not.toContain("trail-cli-password");
    json(await run("user", "set-role", added.userId, "--role", "member", "--json"));
    expect(await rowsOf("user.role_changed", added.userId)).toMatchObject([{ channel: "cli", detail: { from: "operator", to: "member" } }]);
    // The actor filter `cli` finds them.
    const byCli = (await trail(admin.apiKey, { actor: "cli" })).rows.map((r) => r.targetId);
    expect(byCli.filter((id) => id === added.userId)).toHaveLength(2);
  }, 120_000);

  test("admins and auditors read it and export it; members and operators get 403; nobody edits it", async () => {
    for (const reader of [admin, auditor]) expect((await trpcGet(app, { key: reader.apiKey }, "admin.trail", {})).status).toBe(200);
    for (const other of [member, operator]) {
      const res = await trpcGet(app, { key: other.apiKey }, "admin.trail", {});
      expect(res.status).toBe(403);
      expect(JSON.stringify(res.body)).toContain("FORBIDDEN");
      expect((await app.api("/api/export/admin-trail", { key: other.apiKey })).status).toBe(403);
    }
    // No procedure edits it.
    for (const path of ["admin.updateTrail", "admin.deleteTrail", "admin.trail"]) {
      expect((await trpcPost(app, { key: admin.apiKey }, path, {})).status).toBeGreaterThanOrEqual(400);
    }
    // The export: JSONL, newest first, the same rows and filters as the page.
    const res = await app.api("/api/export/admin-trail?action=user.created", { key: auditor.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l) as TRow);
    expect(lines.map((l) => l.id)).toEqual((await trail(auditor.apiKey, { action: "user.created" })).rows.map((r) => r.id));
    expect((await app.api("/api/export/admin-trail?from=yesterday", { key: admin.apiKey })).status).toBe(400);

    // The database refuses UPDATE, DELETE and TRUNCATE, whoever asks.
    const before = (await trail(admin.apiKey)).rows.length;
    const refusal = (query: Promise<unknown>) => query.then(
      () => "done",
      (error: { message: string; cause?: { message?: string } }) => error.cause?.message ?? error.message,
    );
    expect(await refusal(app.deps.db.execute(sql`update audit_log set action = 'forged'`))).toMatch(/append-only: UPDATE on audit_log is refused/);
    expect(await refusal(app.deps.db.execute(sql`delete from audit_log`))).toMatch(/append-only: DELETE on audit_log is refused/);
    expect(await refusal(app.deps.db.execute(sql`truncate audit_log`))).toMatch(/append-only: TRUNCATE on audit_log is refused/);
    const after = (await trail(admin.apiKey)).rows;
    expect(after).toHaveLength(before);
    expect(after.some((r) => r.action === "forged")).toBe(false);
  }, 60_000);

  test("keyset pages: newest first, every row once, filters by actor, action and time", async () => {
    const whole = (await trail(admin.apiKey)).rows;
    expect(whole.length).toBeGreaterThan(7);
    const seen: TRow[] = [];
    let cursor: string | null = null;
    do {
      const page: TPage = await trail(admin.apiKey, { limit: 3, cursor });
      expect(page.rows.length).toBeLessThanOrEqual(3);
      seen.push(...page.rows);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.map((r) => r.id)).toEqual(whole.map((r) => r.id));
    const times = seen.map((r) => Date.parse(r.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const byAdmin = (await trail(admin.apiKey, { actor: admin.userId })).rows;
    expect(byAdmin.length).toBeGreaterThan(0);
    expect(byAdmin.every((r) => r.actorUserId === admin.userId)).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await trail(admin.apiKey, { from: future })).rows).toEqual([]);
    expect((await trail(admin.apiKey, { to: future })).rows).toHaveLength(whole.length);
    const people = (await ok(trpcGet(app, { key: auditor.apiKey }, "admin.trailActors"))) as unknown as Array<{ id: string }>;
    expect(people.map((p) => p.id)).toContain(admin.userId);
    // A bad filter is a 400 that says which.
    expect((await trpcGet(app, { key: admin.apiKey }, "admin.trail", { from: "last week" })).status).toBe(400);
  }, 60_000);
});
