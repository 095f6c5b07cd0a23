import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { createTestDatabaseUrl, testDbKind } from "../../db/testing";
import { describeDatabase } from "../../server/config";
import { freePort, startServerProcess } from "../../server/testing/server-process";
import { cli, json, jsonError, type TRun } from "./cli-helpers";

/**
 * Point 8 of issue 20: the CLI an admin can live with. Every command through `npm run cli`, with a
 * running server (PGlite: through its control socket; PostgreSQL: on the same database); strict
 * flags (an unknown flag or a missing value is exit code 2 with that command's usage, and changes
 * nothing); `--json` results and errors; `--password-stdin`; which database each command used;
 * every admin action's trail row (channel `cli`).
 */

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

const usageOf = (run: TRun) => {
  expect(run.status, run.stdout + run.stderr).toBe(2);
  return run.stderr;
};

test("database descriptions name the PGlite directory or the PostgreSQL URL without its password", () => {
  expect(describeDatabase({ pgliteDir: "/srv/cs/pglite" })).toBe("PGlite /srv/cs/pglite");
  expect(describeDatabase({ url: "postgres://app:s3cret@db.internal:5432/countersign", pgliteDir: "x" })).toBe("PostgreSQL postgres://app:***@db.internal:5432/countersign");
  expect(describeDatabase({ url: "postgres://postgres@127.0.0.1:5432/test", pgliteDir: "x" })).toBe("PostgreSQL postgres://postgres@127.0.0.1:5432/test");
});

test(`every CLI command, its bad flags, --json errors, --password-stdin and its trail rows (${testDbKind()})`, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-cli-admin-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const database = await createTestDatabaseUrl();
  if (database) cleanups.push(database.drop);
  const run = (...args: string[]) => cli(dataDir, database?.url, args);

  // Bad command lines: exit 2, the command's usage, nothing opened or changed.
  // Three at a time: each is a process of its own on a shared machine.
  const lines: string[][] = [
    ["user", "add", "Eve", "--rol", "operator", "--json"],
    ["user", "add", "Eve", "--role"],
    ["key", "revoke", "--json"],
    ["grant", "list", "extra", "--json"],
    ["user", "add", "Eve", "--password", "eve-password-long", "--password-stdin", "--json"],
    ["user", "set-role", "Eve", "--json"],
    ["key", "create", "Eve", "--nmae", "laptop"],
    ["user", "list", "--all", "--json"],
    ["frobnicate", "--json"],
    ["export", "--session", "sess_x", "--from", "2026-01-01T00:00:00Z"],
    ["export", "--session", "sess_x", "--json"],
  ];
  const bad: TRun[] = [];
  for (let i = 0; i < lines.length; i += 3) bad.push(...(await Promise.all(lines.slice(i, i + 3).map((args) => run(...args)))));
  const [rol, missing, noKey, extra, both, noRole, typo, listFlag, unknown, twoWays, exportJson] = bad as [TRun, TRun, TRun, TRun, TRun, TRun, TRun, TRun, TRun, TRun, TRun];
  expect(jsonError(rol)).toMatchObject({ status: 2, code: "usage", message: "Unknown option --rol for user add." });
  expect(jsonError(rol).usage).toContain("npm run cli -- user add NAME [--role ROLE]");
  expect(usageOf(missing)).toContain("Option --role of user add needs a value.");
  expect(usageOf(missing)).toContain("Usage: npm run cli -- user add NAME");
  expect(jsonError(noKey)).toMatchObject({ status: 2, message: "key revoke needs a KEY_ID." });
  expect(jsonError(extra)).toMatchObject({ status: 2, message: 'Unexpected argument "extra" for grant list.' });
  expect(jsonError(both)).toMatchObject({ status: 2, message: "Give --password or --password-stdin, not both." });
  expect(jsonError(noRole)).toMatchObject({ status: 2, message: "user set-role needs --role ROLE." });
  expect(usageOf(typo)).toContain("Unknown option --nmae for key create.");
  expect(usageOf(typo)).toContain("Usage: npm run cli -- key create USER [--name NAME] [--json]");
  expect(jsonError(listFlag)).toMatchObject({ status: 2, message: "Unknown option --all for user list." });
  expect(jsonError(unknown)).toMatchObject({ status: 2, message: 'Unknown command "frobnicate".' });
  expect(jsonError(unknown).usage).toContain("grant revoke GRANT_ID");
  expect(usageOf(twoWays)).toContain("export needs exactly one of --session, --response and --from.");
  expect(jsonError(exportJson)).toMatchObject({ status: 2, message: "Unknown option --json for export." });
  // `--help` of one command: its usage, exit 0.
  const help = await run("grant", "revoke", "--help");
  expect(help.status).toBe(0);
  expect(help.stdout).toContain("Usage: npm run cli -- grant revoke GRANT_ID [--json]");

  const server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url });
  cleanups.push(() => server.kill("SIGKILL"));
  // On PGlite the CLI must find the server's control socket (opened after the demo user), never open the directory beside it.
  for (let i = 0; !database && !existsSync(join(dataDir, "control.sock")) && i < 3000; i++) await new Promise((r) => setTimeout(r, 100));
  const where = database ? describeDatabase({ url: database.url, pgliteDir: "" }) : `${describeDatabase({ pgliteDir: join(dataDir, "pglite") })} (through the running server)`;
  const v1 = (path: string, key: string, body?: unknown) =>
    fetch(`${server.url}${path}`, { method: body ? "POST" : "GET", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });

  // Nothing the bad command lines named exists.
  const users0 = json(await run("user", "list", "--json")) as { users: Array<{ name: string }>; database: string };
  expect(users0.users.map((u) => u.name)).not.toContain("Eve");
  expect(users0.database).toBe(where);

  // The admin whose key reads the trail below (the demo user may still be in the making).
  const adminKey = (json(await run("user", "add", "Root", "--role", "admin", "--json")) as { apiKey: string }).apiKey;

  // user add with --password-stdin: the password signs in, and never appears in the output.
  const ann = json(await cli(dataDir, database?.url, ["user", "add", "Ann Admin", "--role", "operator", "--password-stdin", "--json"], { stdin: "ann-password-long\n" })) as { userId: string; apiKey: string; email: string; database: string };
  expect(ann.database).toBe(where);
  const signIn = await fetch(`${server.url}/api/auth/sign-in/email`, { method: "POST", headers: { "content-type": "application/json", origin: server.url }, body: JSON.stringify({ email: ann.email, password: "ann-password-long" }) });
  expect(signIn.status).toBe(200);
  expect(jsonError(await cli(dataDir, database?.url, ["user", "add", "Nobody", "--password-stdin", "--json"], { stdin: "" }))).toMatchObject({ status: 1, message: "--password-stdin read no password from stdin." });

  // Human output: results on stdout, the database on stderr.
  const listed = await run("user", "list");
  expect(listed.status).toBe(0);
  expect(listed.stdout).toContain("Ann Admin");
  expect(listed.stderr).toContain(`database: ${where}`);

  expect(json(await run("user", "set-role", "Ann Admin", "--role", "admin", "--json"))).toMatchObject({ userId: ann.userId, role: "admin" });
  expect(jsonError(await run("user", "set-role", "Ann Admin", "--role", "overlord", "--json"))).toMatchObject({ status: 2, message: "--role must be one of member, auditor, operator, admin." });

  const key = json(await run("key", "create", ann.email, "--name", "laptop", "--json")) as { keyId: string; apiKey: string };
  expect((await v1("/v1/grants", key.apiKey)).status).toBe(200);
  const keys = json(await run("key", "list", "--user", "Ann Admin", "--json")) as { keys: Array<{ id: string; name: string; prefix: string }> };
  expect(keys.keys.map((k) => k.id)).toContain(key.keyId);
  expect(JSON.stringify(keys)).not.toContain(key.apiKey);
  expect(json(await run("key", "revoke", key.keyId, "--json"))).toMatchObject({ id: key.keyId, revoked: true });
  expect((await v1("/v1/grants", key.apiKey)).status).toBe(401);
  expect(jsonError(await run("key", "revoke", key.keyId, "--json"))).toMatchObject({ status: 1, code: "conflict", message: "This API key is already revoked." });
  expect(jsonError(await run("key", "revoke", "key_nope", "--json"))).toMatchObject({ status: 1, code: "not_found" });
  expect((json(await run("key", "list", "--user", "Ann Admin", "--json")) as { keys: unknown[] }).keys.map((k) => (k as { id: string }).id)).not.toContain(key.keyId);
  expect((json(await run("key", "list", "--user", "Ann Admin", "--all", "--json")) as { keys: unknown[] }).keys.map((k) => (k as { id: string }).id)).toContain(key.keyId);

  // A standing grant from an approval: listed, revoked once.
  const started = new Date(Date.now() - 1000).toISOString();
  const env = (await (await v1("/v1/responses", adminKey, { input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: "echo cli-grant" } }] }, { text: "done" }] } })).json()) as {
    id: string;
    sessionId: string;
    requiredAction: { id: string };
  };
  const approved = (await (await v1(`/v1/approvals/${env.requiredAction.id}`, adminKey, { decision: "approve", grant: "session" })).json()) as { grantId: string };
  const grants = json(await run("grant", "list", "--json")) as { grants: Array<{ id: string; status: string }> };
  expect(grants.grants.map((g) => g.id)).toContain(approved.grantId);
  expect(json(await run("grant", "revoke", approved.grantId, "--json"))).toMatchObject({ id: approved.grantId, status: "revoked" });
  expect(jsonError(await run("grant", "revoke", approved.grantId, "--json"))).toMatchObject({ status: 1, code: "conflict" });
  expect((json(await run("grant", "list", "--all", "--json")) as { grants: Array<{ id: string; status: string }> }).grants.find((g) => g.id === approved.grantId)?.status).toBe("revoked");

  // export: a session, and a time range, as JSONL on stdout (the console's export format).
  const bySession = await run("export", "--session", env.sessionId);
  const byRange = await run("export", "--from", started);
  expect(bySession.status, bySession.stderr).toBe(0);
  expect(bySession.stderr).toContain(`database: ${where}`);
  const events = bySession.stdout.trim().split("\n").map((l) => JSON.parse(l) as { responseId: string; type: string; seq: number });
  expect(events.length).toBeGreaterThan(2);
  expect(events.every((e) => e.responseId === env.id)).toBe(true);
  expect(events.map((e) => e.type)).toContain("approval.resolved");
  expect(byRange.status, byRange.stderr).toBe(0);
  expect(byRange.stdout.trim().split("\n")).toEqual(bySession.stdout.trim().split("\n"));
  const missingSession = await run("export", "--session", "sess_missing");
  expect(missingSession.status).toBe(1);
  expect(missingSession.stderr).toContain("sess_missing");
  const badTime = await run("export", "--from", "yesterday");
  expect(badTime.status).toBe(1);
  expect(badTime.stderr).toContain("--from must be an ISO 8601 time");

  // Every admin action above is one trail row of channel cli, with the OS user; none for refusals.
  const trail = (await (await v1(`/api/trpc/admin.trail?input=${encodeURIComponent(JSON.stringify({ actor: "cli", limit: 200 }))}`, adminKey)).json()) as {
    result: { data: { rows: Array<{ action: string; targetId: string; channel: string; osUser: string | null; actorUserId: string | null }> } };
  };
  const rows = trail.result.data.rows;
  const count = (action: string) => rows.filter((r) => r.action === action).length;
  expect({
    created: count("user.created"),
    role: count("user.role_changed"),
    keyCreated: count("api_key.created"),
    keyRevoked: count("api_key.revoked"),
    grantRevoked: count("grant.revoked"),
  }).toEqual({ created: 2, role: 1, keyCreated: 1, keyRevoked: 1, grantRevoked: 1 });
  expect(rows.every((r) => r.channel === "cli" && r.actorUserId === null && (r.osUser ?? "").length > 0)).toBe(true);
  expect(rows.find((r) => r.action === "grant.revoked")?.targetId).toBe(approved.grantId);
  await server.kill("SIGTERM");
}, 600_000);
