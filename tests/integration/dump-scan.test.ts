import { randomInt } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type DbHandle, openDb } from "../../db/client";
import { paymentCards } from "../../db/schema";
import { createTestDatabaseUrl, testDbKind } from "../../db/testing";
import { loadSecretKey, readSecret, secretSealer } from "../../server/host/secret-store";
import { demoApiKey, freePort, startServerProcess, type TServerProcess } from "../../server/testing/server-process";
import { readPaymentCard } from "../../server/tools/payment-cards";
import { filesUnder, findSpellings, logicalDump } from "./dump-scan-helpers";
import { LiveClient, waitUntil } from "./helpers";

/**
 * Issue 14 point 4, proved at rest: a real server process (PGlite on disk, or PostgreSQL) takes
 * card details over HTTP and the WebSocket, a `request_secret` answer and an approved command
 * with a secret-looking argument; once it has stopped, every place the data could rest is
 * scanned for the card numbers, the holder name, the expiry and the secret answer:
 * - the tables: `pg_dump` on PostgreSQL; every row of every table of the PGlite files on PGlite;
 * - the bytes: every file under the data directory (PGlite's pages and WAL, workspaces, keys,
 *   control files) and on PostgreSQL the test database's relation files and the WAL segments
 *   written during the test (read through `pg_read_binary_file`), plus the process's stdout and
 *   stderr at debug level, in UTF-8, UTF-16, hex and base64 spellings.
 * The approved command's argument must be found by the same scans: proof they see what rests.
 */
const luhnCard = (): string => {
  const digits = [4, ...Array.from({ length: 14 }, () => randomInt(10))];
  const sum = digits
    .slice()
    .reverse()
    .reduce((total, d, i) => total + (i % 2 === 0 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d), 0);
  return [...digits, (10 - (sum % 10)) % 10].join("");
};

const tag = Math.random().toString(36).slice(2, 10);
const CARD_HTTP = { number: luhnCard(), expiry: `0${randomInt(1, 10)}/4${randomInt(10)}`, name: `Dumpscan Holder ${tag}` };
const CARD_LIVE = { number: luhnCard(), expiry: "11/38", name: `Livewire Holder ${tag}` };
const REJECTED_CARD = { number: luhnCard(), expiry: "13/99", name: `Rejected Holder ${tag}` };
const SECRET_ANSWER = `dump-secret-${tag}-Zq9!`;
/** Secret-looking, but an approved command's argument is evidence the trail must keep: the positive control. */
const COMMAND_TOKEN = `ghp_${tag}${"k".repeat(28)}`;

/** The values that must rest nowhere in plain text, scanned in every spelling. */
const FORBIDDEN: Record<string, string> = {
  "card number (HTTP)": CARD_HTTP.number,
  "card number (WebSocket)": CARD_LIVE.number,
  "rejected card number": REJECTED_CARD.number,
  "card holder (HTTP)": CARD_HTTP.name,
  "card holder (WebSocket)": CARD_LIVE.name,
  "rejected card holder": REJECTED_CARD.name,
  "secret answer": SECRET_ANSWER,
};
/** An expiry is too short to scan raw binary pages for without chance hits: it is scanned in the dumps and the output. */
const FORBIDDEN_IN_TEXT: Record<string, string> = { ...FORBIDDEN, "expiry (HTTP)": CARD_HTTP.expiry, "expiry (WebSocket)": CARD_LIVE.expiry };

let dataDir: string;
let database: { url: string; drop: () => Promise<void> } | null = null;
let server: TServerProcess | null = null;
let key: string;
const stored = { secretId: "", firstWalSegment: "" };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "countersign-dump-scan-"));
  database = await createTestDatabaseUrl();
  if (database) stored.firstWalSegment = await walSegmentNow(database.url);
  server = await startServerProcess({ dataDir, port: await freePort(), databaseUrl: database?.url, env: { LOG_LEVEL: "debug" } });
  key = await demoApiKey(dataDir);
}, 90_000);
afterAll(async () => {
  await server?.kill("SIGKILL");
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const post = async (path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
  const res = await fetch(`${server?.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const action = (body: Record<string, unknown>) => body.requiredAction as { id: string; type: string };
const cardScript = { script: [{ toolCalls: [{ name: "collect_card_details" }] }, { text: "charged" }] };

/** The WAL segment PostgreSQL writes to now (shared by every database of the cluster). */
async function walSegmentNow(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ segment: string }[]>`select pg_walfile_name(pg_current_wal_lsn()) as segment`;
    return row?.segment ?? "";
  } finally {
    await sql.end();
  }
}

/** Opens the stopped server's database from the test: the PGlite files, or the PostgreSQL database. */
const openStoppedDatabase = (): Promise<DbHandle> => openDb(database ? { url: database.url, poolSize: 1 } : { dataDir: join(dataDir, "pglite") });

describe(`dump scan: no card detail or secret answer at rest (${testDbKind()})`, () => {
  test("a real server takes cards over HTTP and WebSocket, a secret answer and an approved command", async () => {
    const byHttp = await post("/v1/responses", { input: cardScript });
    expect(action(byHttp.body).type).toBe("client_tool");
    const rejected = await post(`/v1/client-tools/${action(byHttp.body).id}`, { output: REJECTED_CARD });
    expect(rejected.status).toBe(422);
    expect(JSON.stringify(rejected.body)).not.toContain(REJECTED_CARD.number);
    const charged = await post(`/v1/client-tools/${action(byHttp.body).id}`, { output: CARD_HTTP });
    expect(charged.body).toMatchObject({ status: "completed" });

    const live = await LiveClient.open({ url: server?.url as string }, key);
    try {
      live.send({ type: "response.create", input: cardScript });
      const requested = await live.waitFor((f) => f.type === "client_tool.requested");
      live.send({ type: "client_tool.result", requestId: (requested.clientTool as { id: string }).id, output: CARD_LIVE });
      await live.waitFor((f) => f.type === "response.completed" && f.status === "completed");
    } finally {
      live.close();
    }

    const asking = await post("/v1/responses", { input: { script: [{ toolCalls: [{ name: "request_secret", arguments: { name: "api_token", prompt: "Token?" } }] }, { text: "Got it." }] } });
    const resolved = await post("/v1/gateway/question.resolve", { id: action(asking.body).id, answers: { api_token: [SECRET_ANSWER] } });
    expect(resolved.body).toMatchObject({ ok: true, payload: { status: "answered", answers: { api_token: ["stored"] } } });
    const secretRun = await waitUntil(async () => {
      const res = await fetch(`${server?.url}/v1/responses/${asking.body.id}?sessionId=${asking.body.sessionId}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { status: string; output: Array<{ type: string; output?: { secretId?: string } }> };
      return body.status === "completed" ? body : null;
    }, 15_000, "the request_secret run to finish");
    stored.secretId = secretRun.output.find((i) => i.type === "tool_result")?.output?.secretId ?? "";
    expect(stored.secretId).toMatch(/^secret_/);

    const exec = await post("/v1/responses", { input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo token=${COMMAND_TOKEN} > deploy.log` } }] }, { text: "deployed" }] } });
    expect(action(exec.body).type).toBe("human_approval");
    const approved = await post(`/v1/approvals/${action(exec.body).id}`, { decision: "approve" });
    expect(approved.body).toMatchObject({ status: "completed" });

    // Everything is written; a clean stop flushes PGlite's pages before the scans read them.
    await server?.kill("SIGTERM");
    expect(server?.child.exitCode).toBe(0);
  }, 90_000);

  test("the bytes: every file of the data directory and the process output hold none of them in any spelling", () => {
    const files = filesUnder(dataDir);
    expect(files.some((f) => f.path.includes("workspaces") && f.bytes.includes(COMMAND_TOKEN)), "the workspace's deploy.log").toBe(true);
    if (!database) {
      const pglite = files.filter((f) => f.path.startsWith(join(dataDir, "pglite")));
      expect(pglite.length).toBeGreaterThan(100);
      expect(pglite.some((f) => f.bytes.includes(COMMAND_TOKEN)), "the approved command in PGlite's files").toBe(true);
    }
    const hits = files.flatMap((f) => findSpellings(f.bytes, FORBIDDEN).map((hit) => `${hit} in ${f.path}`));
    expect(hits).toEqual([]);

    const output = server?.output() ?? "";
    expect(output).toMatch(/listening/);
    const textHits = Object.entries(FORBIDDEN_IN_TEXT).filter(([, value]) => output.includes(value));
    expect([...findSpellings(Buffer.from(output), FORBIDDEN), ...textHits.map(([what]) => what)]).toEqual([]);
  });

  test("the tables: none of them in a dump of every row; the sealed card and secret decrypt with the key", async () => {
    const handle = await openStoppedDatabase();
    try {
      const dumps: Record<string, string> = { "every row of every table": await logicalDump(handle.db) };
      if (database) {
        const out = spawnSync("/usr/bin/pg_dump", ["--no-owner", "--dbname", database.url], { encoding: "utf8", maxBuffer: 512 * 1024 * 1024 });
        expect(out.status, out.stderr).toBe(0);
        dumps.pg_dump = out.stdout;
      }
      for (const [tool, text] of Object.entries(dumps)) {
        expect(text, `${tool} sees the approved command`).toContain(COMMAND_TOKEN);
        const found = Object.entries(FORBIDDEN_IN_TEXT).filter(([, value]) => text.includes(value));
        expect(found.map(([what]) => what), tool).toEqual([]);
      }
      // They are stored, sealed, and the application handler gets them back with the secret key.
      const secretKey = loadSecretKey(dataDir);
      const cards = await handle.db.select({ id: paymentCards.id }).from(paymentCards);
      const read = await Promise.all(cards.map((card) => readPaymentCard(handle.db, secretSealer(secretKey), card.id)));
      expect(read).toEqual(expect.arrayContaining([CARD_HTTP, CARD_LIVE]));
      expect(read).toHaveLength(2);
      expect(await readSecret(handle.db, secretKey, stored.secretId)).toBe(SECRET_ANSWER);
    } finally {
      await handle.close();
    }
  }, 60_000);

  // Declared on PostgreSQL only, so the PGlite pass has no skipped test.
  if (testDbKind() === "postgres") {
    test("PostgreSQL: the test database's relation files and the WAL written during the test hold none of them", async () => {
      const sql = postgres(database?.url as string, { max: 1, onnotice: () => {} });
      try {
        // WAL first: the checkpoint below may recycle the segments this test wrote.
        const last = await walSegmentNow(database?.url as string);
        const segments = await sql<{ name: string }[]>`select name from pg_ls_waldir() where name between ${stored.firstWalSegment} and ${last} order by name`;
        let walBytes = 0;
        let walSeesCommand = false;
        const hits: string[] = [];
        for (const { name } of segments) {
          const [row] = await sql<{ bytes: Buffer }[]>`select pg_read_binary_file(${`pg_wal/${name}`}) as bytes`;
          const bytes = row?.bytes ?? Buffer.alloc(0);
          walBytes += bytes.length;
          walSeesCommand ||= bytes.includes(COMMAND_TOKEN);
          hits.push(...findSpellings(bytes, FORBIDDEN).map((hit) => `${hit} in pg_wal/${name}`));
        }
        expect(walBytes).toBeGreaterThan(0);
        expect(walSeesCommand, "the approved command in the WAL").toBe(true);

        await sql`checkpoint`;
        const [{ dir } = { dir: "" }] = await sql<{ dir: string }[]>`select 'base/' || oid as dir from pg_database where datname = current_database()`;
        const relationFiles = await sql<{ name: string }[]>`select pg_ls_dir(${dir}) as name`;
        let pagesSeeCommand = false;
        for (const { name } of relationFiles) {
          const [row] = await sql<{ bytes: Buffer }[]>`select pg_read_binary_file(${`${dir}/${name}`}) as bytes`;
          const bytes = row?.bytes ?? Buffer.alloc(0);
          pagesSeeCommand ||= bytes.includes(COMMAND_TOKEN);
          hits.push(...findSpellings(bytes, FORBIDDEN).map((hit) => `${hit} in ${dir}/${name}`));
        }
        expect(relationFiles.length).toBeGreaterThan(100);
        expect(pagesSeeCommand, "the approved command in the relation files").toBe(true);
        expect(hits).toEqual([]);
      } finally {
        await sql.end();
      }
    }, 120_000);
  }
});
