import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PAIRING_TTL_MS } from "../../server/devices/store";
import { testDbKind } from "../../db/testing";
import type { TRequiredAction } from "../../server/core/envelope";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import {
  createPairing,
  data,
  DeviceProcess,
  deviceAgent,
  deviceSession,
  nodeTurn,
  runDeviceScript,
  toolResults,
  trpcGet,
  trpcPost,
} from "./devices-helpers";
import { decide, getResponse, ok200, rows, type TBody } from "./helpers";

let app: TTestApp;
let admin: TTestUser;
let member: TTestUser;
let operator: TTestUser;
let auditor: TTestUser;
const started: DeviceProcess[] = [];

/** The main device: allows uptime and disk, refuses arguments that look like shell syntax. */
let main: { device: DeviceProcess; deviceId: string };

beforeAll(async () => {
  // A plugin's agent declares node commands too (tests/fixtures/plugin-device: uptime).
  app = await startTestApp({ expirySweepMs: 200, plugins: [{ path: resolve("tests/fixtures/plugin-device"), enabled: true }] });
  admin = await app.user("admin");
  member = await app.user("member");
  operator = await app.user("operator");
  auditor = await app.user("auditor");
  main = await DeviceProcess.paired(app, admin.apiKey, "kitchen", ["--allow", "uptime=uptime", "--allow", "disk=df -h .", "--deny-pattern", "[;&|`$]"]);
  started.push(main.device);
});
afterEach(() => app?.clock.reset());
afterAll(async () => {
  await Promise.all(started.map((d) => d.stop()));
  await app?.close();
});

const track = (d: DeviceProcess) => {
  started.push(d);
  return d;
};

const eventsOf = async (responseId: string) =>
  rows<{ type: string; data: Record<string, unknown> }>(app, `select type, data from response_events where response_id = '${responseId}' order by seq`);

/** The session's access changes in the admin trail, oldest first. */
const accessAuditOf = async (sessionId: string) =>
  rows<{ actor_user_id: string | null; action: string; data: Record<string, unknown> }>(
    app,
    `select actor_user_id, action, data from audit_log where target_type = 'session' and target_id = '${sessionId}' order by at, id`,
  );

/** Runs `during` with the device harness declaring `commands` (none: undefined), then restores its declaration. */
async function declaring<T>(commands: string[] | undefined, during: () => Promise<T>): Promise<T> {
  const agent = deviceAgent();
  const saved = agent.requiredNodeCommands;
  agent.requiredNodeCommands = commands;
  try {
    return await during();
  } finally {
    agent.requiredNodeCommands = saved;
  }
}

const approvalOf = (env: TBody) => {
  expect(env.status, JSON.stringify(env)).toBe("requires_action");
  const action = env.requiredAction as Extract<TRequiredAction, { type: "human_approval" }>;
  expect(action.type).toBe("human_approval");
  return action;
};

describe(`paired devices: pairing (${testDbKind()})`, () => {
  it("an admin creates a one-time token (stored hashed, 10 minutes); others cannot", async () => {
    const before = Date.now();
    const pairing = await createPairing(app, admin.apiKey, "spare");
    const after = Date.now();
    expect(pairing.token).toMatch(/^cspair_/);
    // 10 minutes from when the server made it, which is within the call (however long the call took).
    expect(Date.parse(pairing.expiresAt)).toBeGreaterThanOrEqual(before + 10 * 60_000);
    expect(Date.parse(pairing.expiresAt)).toBeLessThanOrEqual(after + 10 * 60_000);
    const [row] = await rows<{ pairing_token_hash: string; status: string }>(app, `select pairing_token_hash, status from devices where id = '${pairing.deviceId}'`);
    expect(row?.status).toBe("pending");
    expect(row?.pairing_token_hash).toBe(createHash("sha256").update(pairing.token).digest("hex"));
    const dump = JSON.stringify(await rows(app, "select * from devices"));
    expect(dump).not.toContain(pairing.token);

    for (const user of [member, operator, auditor]) {
      const denied = await trpcPost(app, user.apiKey, "devices.createPairing", { name: `nope-${user.userId}` });
      expect(denied.status).toBe(403);
      expect(denied.body.error?.message).toMatch(/Only an admin/);
    }
    const dup = await trpcPost(app, admin.apiKey, "devices.createPairing", { name: "spare" });
    expect(dup.status).toBe(409);
    const bad = await trpcPost(app, admin.apiKey, "devices.createPairing", { name: "" });
    expect(bad.status).toBe(400);
  });

  it("a device pairs with a good token, keeps its credential in its state file, and is listed online", async () => {
    const state = JSON.parse(readFileSync(main.device.stateFile, "utf8")) as { deviceId: string; credential: string };
    expect(state.deviceId).toBe(main.deviceId);
    expect(state.credential).toMatch(/^csdev_/);
    expect(statSync(main.device.stateFile).mode & 0o777).toBe(0o600);
    const [row] = await rows<{ credential_hash: string; status: string }>(app, `select credential_hash, status from devices where id = '${main.deviceId}'`);
    expect(row?.status).toBe("paired");
    expect(row?.credential_hash).toBe(createHash("sha256").update(state.credential).digest("hex"));
    const list = data<Array<Record<string, unknown>>>(await trpcGet(app, admin.apiKey, "devices.list"));
    expect(list.find((d) => d.id === main.deviceId)).toMatchObject({ name: "kitchen", status: "paired", online: true, commands: ["uptime", "disk"], consent: "allow", denyPatterns: 1 });
    expect((await trpcGet(app, member.apiKey, "devices.list")).status).toBe(403);
    expect((await trpcGet(app, auditor.apiKey, "devices.list")).status).toBe(200);
  });

  it("a second use of the same token fails and the device exits non-zero", async () => {
    const pairing = await createPairing(app, admin.apiKey, "once");
    const first = track(DeviceProcess.start(app.url, ["--pair", pairing.token, "--allow", "uptime=uptime"]));
    await first.waitFor((e) => e.event === "ready");
    const second = track(DeviceProcess.start(app.url, ["--pair", pairing.token, "--allow", "uptime=uptime"]));
    expect(await second.exited).toBe(1);
    expect(second.stderr).toMatch(/pairing failed: This pairing token was already used/);
    expect(second.events.some((e) => e.event === "ready")).toBe(false);
    await first.stop();
  });

  it("an expired or unknown token fails with a clear error and the device exits non-zero", async () => {
    const pairing = await createPairing(app, admin.apiKey, "late");
    // The token outlives its ten minutes on the server's clock.
    app.clock.advance(PAIRING_TTL_MS + 1000);
    const expired = track(DeviceProcess.start(app.url, ["--pair", pairing.token, "--allow", "uptime=uptime"]));
    expect(await expired.exited).toBe(1);
    expect(expired.stderr).toMatch(/pairing failed: This pairing token has expired/);

    const unknown = track(DeviceProcess.start(app.url, ["--pair", "cspair_not-a-real-token", "--allow", "uptime=uptime"]));
    expect(await unknown.exited).toBe(1);
    expect(unknown.stderr).toMatch(/pairing failed: This pairing token is not valid/);

    // The expired pairing no longer holds its name.
    expect((await createPairing(app, admin.apiKey, "late")).token).toMatch(/^cspair_/);
  });

  it("an unpaired device cannot start, and an agent cannot use an unpaired or unknown device", async () => {
    const unpaired = track(DeviceProcess.start(app.url, ["--allow", "uptime=uptime"]));
    expect(await unpaired.exited).toBe(1);
    expect(unpaired.stderr).toMatch(/this device is not paired: start it once with --pair TOKEN/);

    const bad = track(DeviceProcess.start(app.url, ["--allow", "bad name=x"]));
    expect(await bad.exited).toBe(2);
    expect(bad.stderr).toMatch(/--allow expects NAME=COMMAND/);

    await createPairing(app, admin.apiKey, "never-used");
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("never-used", "uptime"), nodeTurn("nowhere", "uptime"), { text: "done" }]);
    expect(env.status).toBe("completed");
    const [pending, unknown] = toolResults(env);
    expect(pending?.output).toMatchObject({ reason: "unpaired", refusedBy: "server", error: expect.stringMatching(/not paired/) });
    expect(unknown?.output).toMatchObject({ reason: "unknown_device", error: "Unknown device: nowhere. No device has that id or name." });
    const refused = (await eventsOf(env.id)).filter((e) => e.type === "device.refused");
    expect(refused.map((e) => e.data.reason)).toEqual(["unpaired", "unknown_device"]);
  });

  it("a paired device reconnects from its state file without a new token", async () => {
    const { device, deviceId } = await DeviceProcess.paired(app, admin.apiKey, "roamer", ["--allow", "uptime=uptime"]);
    track(device);
    await device.stop();
    const again = track(DeviceProcess.start(app.url, ["--allow", "uptime=uptime"], { stateFile: device.stateFile }));
    const ready = await again.waitFor((e) => e.event === "ready");
    expect(ready.deviceId).toBe(deviceId);
    expect(again.events.some((e) => e.event === "paired")).toBe(false);
    await again.stop();
  });
});

describe(`paired devices: authority (${testDbKind()})`, () => {
  it("a Full access session runs a declared command without a prompt", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const got = data(await trpcGet(app, member.apiKey, "sessions.get", { sessionId }));
    expect(got.access).toBe("full");
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), { text: "done" }]);
    expect(env.status, JSON.stringify(env)).toBe("completed");
    const [result] = toolResults(env);
    expect(result?.output).toMatchObject({ exitCode: 0, stderr: "" });
    expect(result?.output.stdout).toMatch(/load average/);
    expect(Object.keys(result?.output ?? {}).sort()).toEqual(["exitCode", "stderr", "stdout"]);
    expect(await rows(app, `select id from approvals where response_id = '${env.id}'`)).toEqual([]);
    const invoked = (await eventsOf(env.id)).find((e) => e.type === "device.invoked");
    expect(invoked?.data).toMatchObject({ deviceId: main.deviceId, deviceName: "kitchen", command: "uptime", authorizedBy: "session_full", exitCode: 0 });
    // By id as well as by name.
    const byId = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn(main.deviceId, "uptime"), { text: "done" }]);
    expect(toolResults(byId)[0]?.output.exitCode).toBe(0);
  });

  it("a plugin's agent declares its node commands: under Full access uptime runs without a prompt; disk, added to the plugin's array after it registered, asks", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), nodeTurn("kitchen", "disk"), { text: "done" }], "plugin-device");
    // uptime ran without a prompt (the run now waits on disk: its results show once it ends).
    const invoked = (await eventsOf(env.id)).find((e) => e.type === "device.invoked");
    expect(invoked?.data).toMatchObject({ command: "uptime", authorizedBy: "session_full", exitCode: 0 });
    expect(approvalOf(env).action).toBe("node:disk");
    // The approver sees what the harness declared for this attempt, and that disk is not among it.
    expect(approvalOf(env).message).toContain("The agent's harness did not declare this command (it declared: uptime).");
    await app.api(`/v1/responses/${env.id}/cancel`, { key: member.apiKey, body: {} });
  });

  it("a default session gets a human_approval for node:uptime; approved, it runs", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "default");
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), { text: "done" }]);
    const action = approvalOf(env);
    expect(action.action).toBe("node:uptime");
    expect(action.arguments).toMatchObject({ device: "kitchen", command: "uptime", deviceId: main.deviceId });
    expect(action.message).toContain("uptime");
    expect(main.device.events.some((e) => e.event === "invoke" && e.runId === env.id)).toBe(false);
    const done = await ok200(await decide(app, operator.apiKey, action.id, "approve"));
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(toolResults(done)[0]?.output.exitCode).toBe(0);
    const invoked = (await eventsOf(env.id)).find((e) => e.type === "device.invoked");
    expect(invoked?.data.authorizedBy).toBe("approval");
  });

  it("a denied node command never reaches the device", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "default");
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), { text: "done" }]);
    const action = approvalOf(env);
    expect((await decide(app, operator.apiKey, action.id, "deny")).status).toBe(200);
    const after = await ok200(await getResponse(app, member.apiKey, env.id, env.sessionId));
    expect(after.status).toBe("denied");
    expect(main.device.events.some((e) => e.event === "invoke" && e.runId === env.id)).toBe(false);
  });

  it("a Full access session still needs approval for a command the harness did not declare", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "disk"), { text: "done" }]);
    expect(approvalOf(env).action).toBe("node:disk");
    const done = await ok200(await decide(app, operator.apiKey, approvalOf(env).id, "approve"));
    expect(toolResults(done)[0]?.output).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/Filesystem/) });
  });

  it("a harness without the declaration gets the ordinary approval path even with Full access", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await declaring(undefined, () => runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), { text: "done" }]));
    expect(approvalOf(env).action).toBe("node:uptime");
    await app.api(`/v1/responses/${env.id}/cancel`, { key: member.apiKey, body: {} });
  });

  it("mutating the declaration mid-attempt cannot widen authority", async () => {
    const slow = await DeviceProcess.paired(app, admin.apiKey, "slowpoke", ["--allow", "uptime=sleep 1.5; uptime", "--allow", "disk=df -h ."]);
    track(slow.device);
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const agent = deviceAgent();
    const declared = agent.requiredNodeCommands;
    expect(declared).toEqual(["uptime"]);
    const pending = runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("slowpoke", "uptime"), nodeTurn("slowpoke", "disk"), { text: "done" }]);
    let env: TBody;
    try {
      // While the first (declared) command runs in this attempt, widen the config's declaration.
      await slow.device.waitFor((e) => e.event === "started");
      declared?.push("disk");
      env = await pending;
    } finally {
      declared?.splice(declared.indexOf("disk"), 1);
    }
    expect(declared).toEqual(["uptime"]);
    const action = approvalOf(env);
    expect(action.action).toBe("node:disk");
    expect(slow.device.events.filter((e) => e.event === "invoke").map((e) => e.command)).toEqual(["uptime"]);
    await app.api(`/v1/responses/${env.id}/cancel`, { key: member.apiKey, body: { reason: "test over" } });
    await slow.device.stop();
  });

  it("the device refuses a command outside its allowlist even when the server authorized it", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    // The harness declares it and the session has Full access: the server sends it without a prompt.
    const env = await declaring(["uptime", "reboot"], () => runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "reboot"), { text: "done" }]));
    expect(env.status).toBe("completed");
    expect(toolResults(env)[0]?.output).toEqual({
      error: "Device kitchen refused: reboot is not in the device allowlist.",
      reason: "not_allowlisted",
      refusedBy: "device",
    });
    await main.device.waitFor((e) => e.event === "refused" && e.reason === "not_allowlisted");
    const refused = (await eventsOf(env.id)).find((e) => e.type === "device.refused");
    expect(refused?.data).toMatchObject({ refusedBy: "device", reason: "not_allowlisted", deviceId: main.deviceId });
    // Approved by a person: still refused by the device.
    const other = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "shutdown"), { text: "done" }]);
    const done = await ok200(await decide(app, operator.apiKey, approvalOf(other).id, "approve"));
    expect(toolResults(done)[0]?.output).toMatchObject({ reason: "not_allowlisted", refusedBy: "device" });
  });

  it("the device's local policy and its owner's consent refuse, whatever the server says", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime", { args: ["-p; touch /tmp/pwned"] }), { text: "done" }]);
    expect(toolResults(env)[0]?.output).toMatchObject({ reason: "policy", refusedBy: "device", error: expect.stringMatching(/deny pattern/) });

    const shy = await DeviceProcess.paired(app, admin.apiKey, "shy", ["--allow", "uptime=uptime", "--consent", "deny"]);
    track(shy.device);
    const denied = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("shy", "uptime"), { text: "done" }]);
    expect(toolResults(denied)[0]?.output).toMatchObject({ reason: "consent", refusedBy: "device", error: expect.stringMatching(/not consented/) });
    expect(shy.device.events.some((e) => e.event === "started")).toBe(false);
    await shy.device.stop();
  });

  it("an offline device is reported, not waited for", async () => {
    const gone = await DeviceProcess.paired(app, admin.apiKey, "sleeper", ["--allow", "uptime=uptime"]);
    await gone.device.stop();
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("sleeper", "uptime"), { text: "done" }]);
    expect(toolResults(env)[0]?.output).toMatchObject({ reason: "offline", error: expect.stringMatching(/offline/) });
  });

  it("revoking a pairing disconnects the device and refuses its commands afterwards", async () => {
    const victim = await DeviceProcess.paired(app, admin.apiKey, "victim", ["--allow", "uptime=uptime"]);
    track(victim.device);
    expect((await trpcPost(app, operator.apiKey, "devices.revoke", { deviceId: victim.deviceId })).status).toBe(403);
    const revoked = data(await trpcPost(app, admin.apiKey, "devices.revoke", { deviceId: victim.deviceId }));
    expect(revoked).toMatchObject({ deviceId: victim.deviceId, status: "revoked" });
    expect(await victim.device.exited).toBe(1);
    expect(victim.device.stderr).toMatch(/revoked/);
    expect((await trpcPost(app, admin.apiKey, "devices.revoke", { deviceId: victim.deviceId })).status).toBe(409);
    expect((await trpcPost(app, admin.apiKey, "devices.revoke", { deviceId: "dev_missing" })).status).toBe(404);

    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("victim", "uptime"), nodeTurn(victim.deviceId, "uptime"), { text: "done" }]);
    for (const r of toolResults(env)) expect(r.output).toMatchObject({ reason: "revoked", error: expect.stringMatching(/revoked/) });

    // Its stored credential no longer connects.
    const back = track(DeviceProcess.start(app.url, ["--allow", "uptime=uptime"], { stateFile: victim.device.stateFile }));
    expect(await back.exited).toBe(1);
    expect(back.stderr).toMatch(/revoked by an admin/);
    const list = data<Array<Record<string, unknown>>>(await trpcGet(app, admin.apiKey, "devices.list"));
    expect(list.find((d) => d.id === victim.deviceId)).toMatchObject({ status: "revoked", online: false });
  });

  it("revoking while a person decides refuses the approved command", async () => {
    const late = await DeviceProcess.paired(app, admin.apiKey, "late-revoke", ["--allow", "uptime=uptime"]);
    track(late.device);
    const sessionId = await deviceSession(app, member.apiKey, "default");
    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("late-revoke", "uptime"), { text: "done" }]);
    const action = approvalOf(env);
    data(await trpcPost(app, admin.apiKey, "devices.revoke", { deviceId: late.deviceId }));
    const done = await ok200(await decide(app, operator.apiKey, action.id, "approve"));
    expect(toolResults(done)[0]?.output).toMatchObject({ reason: "revoked" });
    expect(late.device.events.some((e) => e.event === "invoke")).toBe(false);
  });

  it("a member cannot grant its own session Full access: 403, nothing changes, the declared command still asks", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "default");
    const refused = await trpcPost(app, member.apiKey, "sessions.setAccess", { sessionId, access: "full" });
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toBe("Only an operator or an admin can grant Full access; ask one to grant it to this session.");
    expect(data(await trpcGet(app, member.apiKey, "sessions.get", { sessionId })).access).toBe("default");
    expect(await accessAuditOf(sessionId)).toEqual([]);
    const page = data(await trpcGet(app, member.apiKey, "audit.session", { sessionId }));
    expect(page).toMatchObject({ access: "default", canChangeAccess: false, fullAccessGrant: null });

    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), { text: "done" }]);
    expect(approvalOf(env).action).toBe("node:uptime");
    expect(main.device.events.some((e) => e.event === "invoke" && e.runId === env.id)).toBe(false);
    await app.api(`/v1/responses/${env.id}/cancel`, { key: member.apiKey, body: {} });
  });

  it("an operator grants Full access to the member's session: the audit log and the command's frame name the operator", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "default");
    const grantedFrom = Date.now();
    expect(data(await trpcPost(app, operator.apiKey, "sessions.setAccess", { sessionId, access: "full" }))).toEqual({ sessionId, access: "full" });
    const grantedBy = Date.now();
    const [grant, ...more] = await accessAuditOf(sessionId);
    expect(more).toEqual([]);
    expect(grant).toMatchObject({ actor_user_id: operator.userId, action: "session.access.grant", data: { from: "default", to: "full", ownerUserId: member.userId } });

    const env = await runDeviceScript(app, member.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), { text: "done" }]);
    expect(env.status, JSON.stringify(env)).toBe("completed");
    const invoked = (await eventsOf(env.id)).find((e) => e.type === "device.invoked");
    expect(invoked?.data).toMatchObject({ authorizedBy: "session_full", fullAccessGrantedBy: operator.userId, fullAccessGrantedAt: expect.any(String) });

    // The session page shows who granted it and when; the owner may only switch it back down.
    const asOwner = data<{ fullAccessGrant: { at: string } }>(await trpcGet(app, member.apiKey, "audit.session", { sessionId }));
    expect(asOwner).toMatchObject({ access: "full", canChangeAccess: true, fullAccessGrant: { byUserId: operator.userId, by: expect.any(String) } });
    // When the grant was made (within the call that made it, however long the test has run since).
    expect(Date.parse(asOwner.fullAccessGrant.at)).toBeGreaterThanOrEqual(grantedFrom - 1);
    expect(Date.parse(asOwner.fullAccessGrant.at)).toBeLessThanOrEqual(grantedBy);
    expect(data(await trpcGet(app, auditor.apiKey, "audit.session", { sessionId })).canChangeAccess).toBe(false);
    const listed = data<{ rows: Array<{ id: string; fullAccessGrant: unknown }> }>(await trpcGet(app, operator.apiKey, "audit.sessions", { q: sessionId }));
    expect(listed.rows.find((r) => r.id === sessionId)?.fullAccessGrant).toMatchObject({ byUserId: operator.userId });
  });

  it("revocations are recorded; the owner may lower its own session; others and bad input change nothing", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", admin.apiKey);
    const other = await app.user("member");
    expect((await trpcPost(app, other.apiKey, "sessions.setAccess", { sessionId, access: "default" })).status).toBe(404);
    const byAuditor = await trpcPost(app, auditor.apiKey, "sessions.setAccess", { sessionId, access: "default" });
    expect(byAuditor.status).toBe(403);
    expect(byAuditor.body.error?.message).toBe("Auditors cannot change a session's access.");
    expect((await trpcPost(app, operator.apiKey, "sessions.setAccess", { sessionId, access: "root" })).status).toBe(400);
    expect(data(await trpcGet(app, member.apiKey, "sessions.get", { sessionId })).access).toBe("full");
    expect((await accessAuditOf(sessionId)).map((r) => r.action)).toEqual(["session.access.grant"]);

    expect(data(await trpcPost(app, operator.apiKey, "sessions.setAccess", { sessionId, access: "default" }))).toEqual({ sessionId, access: "default" });
    expect(data(await trpcPost(app, admin.apiKey, "sessions.setAccess", { sessionId, access: "full" }))).toEqual({ sessionId, access: "full" });
    expect(data(await trpcPost(app, member.apiKey, "sessions.setAccess", { sessionId, access: "default" }))).toEqual({ sessionId, access: "default" });
    // Setting the access a session already has records nothing.
    expect(data(await trpcPost(app, member.apiKey, "sessions.setAccess", { sessionId, access: "default" }))).toEqual({ sessionId, access: "default" });
    const trail = await accessAuditOf(sessionId);
    expect(trail.map((r) => [r.action, r.actor_user_id])).toEqual([
      ["session.access.grant", admin.userId],
      ["session.access.revoke", operator.userId],
      ["session.access.grant", admin.userId],
      ["session.access.revoke", member.userId],
    ]);
    expect(data(await trpcGet(app, member.apiKey, "audit.session", { sessionId }))).toMatchObject({ access: "default", fullAccessGrant: null, canChangeAccess: false });
  });

  it("an operator may grant Full access to its own session too", async () => {
    const sessionId = await deviceSession(app, operator.apiKey, "full", operator.apiKey);
    const [grant] = await accessAuditOf(sessionId);
    expect(grant).toMatchObject({ actor_user_id: operator.userId, action: "session.access.grant", data: { ownerUserId: operator.userId } });
    const env = await runDeviceScript(app, operator.apiKey, sessionId, [nodeTurn("kitchen", "uptime"), { text: "done" }]);
    expect(env.status, JSON.stringify(env)).toBe("completed");
  });

  it("bad node_invoke arguments are a clear error, never a command", async () => {
    const sessionId = await deviceSession(app, member.apiKey, "full", operator.apiKey);
    const env = await runDeviceScript(app, member.apiKey, sessionId, [
      { toolCalls: [{ name: "node_invoke", arguments: { device: "kitchen", command: "up time" } }] },
      { toolCalls: [{ name: "node_invoke", arguments: { device: "kitchen" } }] },
      { toolCalls: [{ name: "node_invoke", arguments: { device: "kitchen", command: "uptime", args: [1] } }] },
      { text: "done" },
    ]);
    expect(env.status).toBe("completed");
    for (const r of toolResults(env)) expect(String(r.output.error)).toMatch(/^Invalid arguments for node_invoke/);
    expect(main.device.events.filter((e) => e.event === "invoke" && e.runId === env.id)).toEqual([]);
  });
});
