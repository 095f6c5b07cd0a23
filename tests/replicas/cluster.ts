import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { createTestDatabaseUrl } from "../../db/testing";
import { freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";

export type TCluster = {
  replicas: TServerProcess[];
  key: string;
  databaseUrl: string;
  /** Each replica's data directory (a session's workspace lives in the one of the replica that created it). */
  dataDirs: string[];
  /** Starts replica `i` again (after a kill) on its own port and data directory. */
  restart: (i: number) => Promise<TServerProcess>;
  close: () => Promise<void>;
};

/** N server processes on one fresh PostgreSQL database, sharing secrets like real replicas would. */
export async function startCluster(n: number): Promise<TCluster> {
  const database = await createTestDatabaseUrl();
  if (!database) throw new Error("The replicas suite needs TEST_DATABASE_URL and TEST_DB=postgres.");
  const env = {
    BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
    COUNTERSIGN_SECRET_KEY: randomBytes(32).toString("base64"),
    COUNTERSIGN_LEASE_MS: "2000",
  };
  const dirs = Array.from({ length: n }, () => mkdtempSync(join(tmpdir(), "countersign-replica-")));
  const ports = await Promise.all(dirs.map(() => freePort()));
  const replicas: TServerProcess[] = [];
  for (let i = 0; i < n; i++) replicas.push(await startServerProcess({ dataDir: dirs[i] as string, port: ports[i] as number, databaseUrl: database.url, env }));
  const cli = spawnSync("node", ["--import", "tsx", "server/cli/main.ts", "user", "add", `Replica Tester ${Date.now()}`, "--role", "operator", "--json"], {
    env: { ...process.env, DATABASE_URL: database.url, COUNTERSIGN_DATA_DIR: dirs[0] as string, ...env },
    encoding: "utf8",
  });
  if (cli.status !== 0) throw new Error(`cli failed: ${cli.stderr}`);
  const key = (JSON.parse(cli.stdout) as { apiKey: string }).apiKey;
  return {
    replicas,
    key,
    databaseUrl: database.url,
    dataDirs: dirs,
    restart: async (i) => {
      replicas[i] = await startServerProcess({ dataDir: dirs[i] as string, port: ports[i] as number, databaseUrl: database.url, env });
      return replicas[i] as TServerProcess;
    },
    close: async () => {
      for (const r of replicas) await r.kill("SIGKILL").catch(() => {});
      await database.drop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** fetch with the cluster's key. */
export const call = (url: string, key: string, body?: unknown) =>
  fetch(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
