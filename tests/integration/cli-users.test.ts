import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { createTestDatabaseUrl, testDbKind } from "../../db/testing";
import { freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { LiveClient } from "./helpers";
import { within } from "./stream-helpers";
import { cli, json, jsonError, type TRun } from "./cli-helpers";

/**
 * Point 10 of issue 14 through the CLI: `user disable|enable|delete|offboard USER [--json]`, with and
 * without a running server. A running server's sockets of the user close at once (through the
 * server's control channel on PGlite, through NOTIFY on PostgreSQL); unknown options and
 * subcommands are errors that change nothing; the last admin stays.
 */

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

const keyStatus = async (url: string, key: string) => (await fetch(`${url}/v1/grants`, { headers: { authorization: `Bearer ${key}` } })).status;

const signInStatus = async (url: string, email: string, password: string) =>
  (await fetch(`${url}/api/auth/sign-in/email`, { method: "POST", headers: { "content-type": "application/json", origin: url }, body: JSON.stringify({ email, password }) })).status;

const statusOf = async (url: string, adminKey: string, userId: string) => {
  const res = await fetch(`${url}/api/trpc/admin.users`, { headers: { authorization: `Bearer ${adminKey}` } });
  const users = ((await res.json()) as { result: { data: Array<{ id: string; status: string; email: string }> } }).result.data;
  return users.find((u) => u.id === userId);
};

test(`the CLI disables, enables and deletes users, with and without a running server (${testDbKind()})`, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-cli-users-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const database = await createTestDatabaseUrl();
  if (database) cleanups.push(database.drop);
  const run = (...args: string[]) => cli(dataDir, database?.url, args);

  // Unknown options, subcommands and extra arguments are errors, never ignored (checked before the database opens).
  const refusals = [
    [["user", "disable", "Op", "--force", "--json"], "Unknown option --force for user disable"],
    [["user", "suspend", "Op", "--json"], 'Unknown command "user suspend"'],
    [["user", "delete", "Op", "Root", "--json"], 'Unexpected argument "Root" for user delete'],
    [["user", "enable", "--json"], "user enable needs a USER"],
  ] as const;
  const refused = await Promise.all(refusals.map(([args]) => run(...args)));
  refusals.forEach(([args, message], i) => {
    // A bad command line: exit code 2, the message and that command's usage, as JSON with --json.
    const error = jsonError(refused[i] as TRun);
    expect(error.status, args.join(" ")).toBe(2);
    expect(error.code).toBe("usage");
    expect(error.message).toContain(message);
  });

  const root = json(await run("user", "add", "Root", "--role", "admin", "--json")) as { userId: string; apiKey: string };
  const op = json(await run("user", "add", "Op", "--role", "operator", "--password", "op-password-long", "--json")) as { userId: string; apiKey: string; email: string };
  // Teams for a person who signs in with a password (docs/sso.md#teams).
  expect(json(await run("user", "teams", "Op", "--team", "payments-oncall", "--team", "sre", "--json"))).toMatchObject({ userId: op.userId, teams: ["payments-oncall", "sre"], changed: true });
  // Root is the only admin: it stays one.
  expect(jsonError(await run("user", "disable", "Root", "--json")).message).toContain("Root is the last admin; make another user admin first.");
  // Without a server (or directly on PostgreSQL): disabled.
  expect(json(await run("user", "disable", "Op", "--json"))).toMatchObject({ userId: op.userId, name: "Op", status: "disabled" });

  const server: TServerProcess = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url });
  cleanups.push(() => server.kill("SIGKILL"));
  expect(await keyStatus(server.url, op.apiKey)).toBe(401);
  expect(await signInStatus(server.url, op.email, "op-password-long")).toBe(403);
  expect((await statusOf(server.url, root.apiKey, op.userId))?.status).toBe("disabled");
  expect(await keyStatus(server.url, root.apiKey)).toBe(200);

  // With the server running: enabled again, the key and the password work.
  expect(json(await run("user", "enable", op.email, "--json"))).toMatchObject({ status: "active" });
  expect(await keyStatus(server.url, op.apiKey)).toBe(200);
  expect(await signInStatus(server.url, op.email, "op-password-long")).toBe(200);

  // Offboarded (someone left), with the server running: disabled, its key revoked for good.
  const leaver = json(await run("user", "add", "Leaver", "--role", "operator", "--json")) as { userId: string; apiKey: string };
  expect(json(await run("user", "offboard", "Leaver", "--json"))).toMatchObject({ userId: leaver.userId, name: "Leaver", status: "disabled", keysRevoked: 1, sessionsEnded: 0 });
  expect(await keyStatus(server.url, leaver.apiKey)).toBe(401);
  expect((await statusOf(server.url, root.apiKey, leaver.userId))?.status).toBe("disabled");

  // Deleted while its socket is open: the socket closes at once; gone for good; the email is free again.
  const socket = await LiveClient.open({ url: server.url }, op.apiKey);
  expect(json(await run("user", "delete", "Op", "--json"))).toMatchObject({ userId: op.userId, name: "Op", status: "deleted" });
  // Well before the server's periodic re-check (30 s): only the deletion's announcement closes it this soon.
  expect((await within(socket.closed, 15_000, "the close of the deleted user's socket")).code).toBe(4401);
  expect(await keyStatus(server.url, op.apiKey)).toBe(401);
  expect(await signInStatus(server.url, op.email, "op-password-long")).toBe(401);
  const [enable, key] = await Promise.all([run("user", "enable", op.userId, "--json"), run("key", "create", op.userId, "--json")]);
  expect(jsonError(enable).message).toContain("Op was deleted; a deleted user cannot be enabled.");
  expect(jsonError(key).message).toContain("Op was deleted; deleted users get no new API keys.");
  const row = await statusOf(server.url, root.apiKey, op.userId);
  expect(row?.status).toBe("deleted");
  expect(row?.email).not.toBe(op.email);
  const successor = json(await run("user", "add", "Op Again", "--email", op.email, "--json")) as { apiKey: string };
  expect(await keyStatus(server.url, successor.apiKey)).toBe(200);
  await server.kill("SIGTERM");
}, 400_000);
