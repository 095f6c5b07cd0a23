import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { createTestDatabaseUrl } from "../../db/testing";
import { freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { cli, jsonError } from "./cli-helpers";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});


const whoAmI = async (url: string, apiKey: string) =>
  fetch(`${url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ input: "hello" }),
  });

test("the CLI adds users and keys whether or not the server runs on the same data", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "countersign-cli-"));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const database = await createTestDatabaseUrl();
  if (database) cleanups.push(database.drop);

  const offline = await cli(dataDir, database?.url, ["user", "add", "Alice Example", "--role", "operator", "--json"]);
  expect(offline.status, offline.stderr).toBe(0);
  const alice = JSON.parse(offline.stdout) as { userId: string; apiKey: string };
  expect(alice.userId).toMatch(/\S/);
  expect(alice.apiKey).toMatch(/^cs_/);

  const bad = await cli(dataDir, database?.url, ["user", "add", "Mallory", "--role", "overlord", "--json"]);
  expect(jsonError(bad)).toMatchObject({ status: 2, code: "usage" });
  expect(jsonError(bad).message).toContain("--role must be one of");

  let server: TServerProcess = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url });
  cleanups.push(() => server.kill("SIGKILL"));
  expect((await whoAmI(server.url, alice.apiKey)).status).toBe(200);

  const online = await cli(dataDir, database?.url, ["key", "create", "Alice Example", "--json"]);
  expect(online.status, online.stderr).toBe(0);
  const second = JSON.parse(online.stdout) as { userId: string; apiKey: string };
  expect(second.userId).toBe(alice.userId);
  expect(second.apiKey).not.toBe(alice.apiKey);
  expect((await whoAmI(server.url, second.apiKey)).status).toBe(200);

  const bob = JSON.parse((await cli(dataDir, database?.url, ["user", "add", "Bob", "--role", "member", "--json"])).stdout) as { apiKey: string };
  expect((await whoAmI(server.url, bob.apiKey)).status).toBe(200);
  expect((await whoAmI(server.url, "cs_not-a-real-key")).status).toBe(401);

  const missing = await cli(dataDir, database?.url, ["key", "create", "Nobody", "--json"]);
  expect(jsonError(missing)).toMatchObject({ status: 1, code: "not_found" });
  expect(jsonError(missing).message).toContain("No single user matches Nobody");

  await server.kill("SIGTERM");
  server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url });
  expect((await whoAmI(server.url, bob.apiKey)).status).toBe(200);
  await server.kill("SIGTERM");
}, 180_000);
