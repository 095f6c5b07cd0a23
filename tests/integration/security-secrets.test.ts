import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { secretSealer } from "../../server/host/secret-store";
import { readPaymentCard } from "../../server/tools/payment-cards";
import { expectError, LiveClient, ok200, readSse, rows, type TBody, waitUntil } from "./helpers";
import { allStrings, signIn, trpcGet, trpcPost } from "./security-helpers";

/**
 * Secrets and private inputs stay where they belong. After running every flow that handles one
 * (private card input over HTTP and WebSocket, rejected card input, secret answers over the
 * gateway and the console, request_secret, console sign-in with a password, API keys), a full
 * dump of the database is scanned: on PostgreSQL a real `pg_dump` of the throwaway database, on
 * PGlite every row of every table. Card details, secret answers, passwords and API keys appear
 * nowhere in plaintext (cards live as `last4` plus a value sealed with the secret key in
 * `payment_cards`, secret answers encrypted in `secret_values`). The same values are absent from the server's logs and from every export
 * (event replays, trajectories, lists, envelopes).
 */
let app: TTestApp;
let alice: TTestUser;
let operator: TTestUser;

const tag = Math.random().toString(36).slice(2, 10);
const CARD = { number: "4929871234567893", expiry: "07/31", name: `Zyxwv Holder ${tag}` };
const REJECTED_CARD = { number: "49298712345678X1", expiry: "13/99", name: `Qwert Rejected ${tag}` };
const SECRET_GATEWAY = `gw-secret-${tag}-Aa1!`;
const SECRET_CONSOLE = `console-secret-${tag}-Bb2?`;
const SECRET_TOOL = `tool-secret-${tag}-Cc3#`;
const WRONG_PASSWORD = `wrong-password-${tag}`;
const responseIds: Array<{ id: string; sessionId: string }> = [];

beforeAll(async () => {
  app = await startTestApp();
  alice = await app.user("member", `Alice ${tag}`);
  operator = await app.user("operator", `Olga ${tag}`);
});
afterAll(async () => {
  await app?.close();
});

async function gateway(key: string, method: string, params: unknown): Promise<Record<string, unknown>> {
  const res = await app.api(`/v1/gateway/${method}`, { key, body: params });
  const body = (await res.json()) as { ok: boolean; payload: Record<string, unknown> };
  expect(body.ok, JSON.stringify(body)).toBe(true);
  return body.payload;
}

async function finished(env: { id: string; sessionId: string }): Promise<TBody> {
  return waitUntil(async () => {
    const e = await ok200(await app.api(`/v1/responses/${env.id}?sessionId=${env.sessionId}`, { key: alice.apiKey }));
    return e.status === "completed" || e.status === "failed" ? e : null;
  }, 15_000, "the run to finish");
}

/** Every table's rows as text: pg_dump on PostgreSQL, row_to_json of every public table on PGlite. */
async function dumpDatabase(): Promise<{ tool: string; sections: Map<string, string> }> {
  const sections = new Map<string, string>();
  if (testDbKind() === "postgres") {
    const [db] = await rows<{ name: string }>(app, "select current_database() as name");
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.pathname = `/${db?.name}`;
    const out = spawnSync("pg_dump", ["--data-only", "--no-owner", "--dbname", url.toString()], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
    expect(out.status, out.stderr).toBe(0);
    // Split into one section per table (COPY blocks), so hits can be attributed.
    let current = "(preamble)";
    for (const line of out.stdout.split("\n")) {
      const copy = line.match(/^COPY public\.(\S+) /);
      if (copy) current = copy[1] as string;
      sections.set(current, `${sections.get(current) ?? ""}${line}\n`);
    }
    expect([...sections.keys()]).toEqual(expect.arrayContaining(["payment_cards", "secret_values", "response_events", "responses", "api_keys", "accounts"]));
    return { tool: "pg_dump", sections };
  }
  const tables = await rows<{ table_name: string }>(app, "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name");
  for (const { table_name } of tables) {
    const all = await rows<{ row: unknown }>(app, `select row_to_json(t)::text as row from "${table_name}" t`);
    sections.set(table_name, all.map((r) => String(r.row)).join("\n"));
  }
  return { tool: "row_to_json of every table", sections };
}

const where = (sections: Map<string, string>, value: string): string[] => [...sections].filter(([, text]) => text.includes(value)).map(([table]) => table);

describe(`secrets and private input stay put (${testDbKind()})`, () => {
  test("run every flow that handles a secret or private input", async () => {
    // Private card input over HTTP (plus a rejected attempt first) and over the WebSocket.
    const http = await ok200(await app.api("/v1/responses", { key: alice.apiKey, body: { input: { script: [{ toolCalls: [{ name: "collect_card_details" }] }, { text: "charged" }] } } }));
    responseIds.push(http);
    const rejected = await expectError(await app.api(`/v1/client-tools/${http.requiredAction?.id}`, { key: alice.apiKey, body: { output: REJECTED_CARD } }), 422, "validation_failed");
    for (const v of Object.values(REJECTED_CARD)) expect(rejected.detail).not.toContain(v);
    const charged = await ok200(await app.api(`/v1/client-tools/${http.requiredAction?.id}`, { key: alice.apiKey, body: { output: CARD } }));
    expect(charged.status).toBe("completed");
    expect(JSON.stringify(charged)).not.toContain(CARD.number);

    const live = await LiveClient.open(app, alice.apiKey);
    live.send({ type: "response.create", input: { script: [{ toolCalls: [{ name: "collect_card_details" }] }, { text: "charged" }] } });
    const requested = await live.waitFor((f) => f.type === "client_tool.requested");
    live.send({ type: "client_tool.result", requestId: (requested.clientTool as { id: string }).id, output: { ...CARD } });
    await live.waitFor((f) => f.type === "response.completed" && f.status === "completed");
    responseIds.push({ id: requested.responseId, sessionId: live.sessionId });
    live.close();

    // A secret gateway question answered over HTTP.
    const asked = await gateway(alice.apiKey, "question.request", { questions: [{ questionId: "token", header: "Token", question: "Paste it", isSecret: true }] });
    expect(await gateway(alice.apiKey, "question.resolve", { id: asked.id, answers: { token: [SECRET_GATEWAY] } })).toEqual({ status: "answered", answers: { token: ["stored"] } });

    // A secret question answered in the console (cookie, same origin, tRPC) by an operator.
    const cookie = await signIn(app, operator);
    const asked2 = await gateway(alice.apiKey, "question.request", { questions: [{ questionId: "pin", header: "PIN", question: "PIN?", isSecret: true }] });
    const byConsole = await trpcPost(app, { cookie, headers: { origin: app.url } }, "question.resolve", { id: asked2.id, answers: { pin: [SECRET_CONSOLE] } });
    expect(byConsole.status, JSON.stringify(byConsole.body)).toBe(200);

    // request_secret from a run: the agent sees only that it was stored.
    const run = await ok200(await app.api("/v1/responses", { key: alice.apiKey, body: { input: { script: [{ toolCalls: [{ name: "request_secret", arguments: { name: "api_token", prompt: "Token?" } }] }, { text: "Got it." }] } } }));
    responseIds.push(run);
    await gateway(alice.apiKey, "question.resolve", { id: run.requiredAction?.id, answers: { api_token: [SECRET_TOOL] } });
    expect((await finished(run)).status).toBe("completed");

    // A failed sign-in with a wrong password.
    const failed = await fetch(`${app.url}/api/auth/sign-in/email`, { method: "POST", headers: { "content-type": "application/json", origin: app.url }, body: JSON.stringify({ email: alice.email, password: WRONG_PASSWORD }) });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    await signIn(app, alice);
  });

  const plaintextSecrets = () => ({
    "secret answer (gateway)": SECRET_GATEWAY,
    "secret answer (console)": SECRET_CONSOLE,
    "secret answer (request_secret)": SECRET_TOOL,
    "alice's password": alice.password,
    "operator's password": operator.password,
    "wrong password": WRONG_PASSWORD,
    "alice's API key": alice.apiKey,
    "operator's API key": operator.apiKey,
    "rejected card number": REJECTED_CARD.number,
    "rejected card holder": REJECTED_CARD.name,
  });

  test("the database dump: card details, secrets, passwords and keys nowhere", async () => {
    const { tool, sections } = await dumpDatabase();
    expect(sections.size, tool).toBeGreaterThan(5);
    for (const [what, value] of Object.entries(plaintextSecrets())) expect(where(sections, value), `${what} found by ${tool}`).toEqual([]);
    expect(where(sections, CARD.number), `card number (${tool})`).toEqual([]);
    expect(where(sections, CARD.name), `card holder (${tool})`).toEqual([]);
    // The stores really hold them: two cards (last4 readable, the rest sealed), three encrypted answers, whose ciphertext is not the value.
    expect((sections.get("payment_cards") ?? "").split(CARD.number.slice(-4)).length - 1).toBeGreaterThanOrEqual(2);
    const cards = await rows<{ id: string }>(app, "select id from payment_cards");
    expect(cards).toHaveLength(2);
    for (const card of cards) expect(await readPaymentCard(app.deps.db, secretSealer(app.deps.secretKey), card.id)).toEqual(CARD);
    const secretRows = await rows<{ ciphertext: string }>(app, "select ciphertext from secret_values");
    expect(secretRows.length).toBeGreaterThanOrEqual(3);
    // The model saw only the public response.
    expect(where(sections, "cardOnFile")).toEqual(expect.arrayContaining(["response_events", "responses"]));
  });

  test("the logs (debug level) hold none of them", () => {
    // Everything the server logged during these flows, at debug level (may be little: requests are not logged one by one).
    const logs = app.logs();
    for (const [what, value] of Object.entries({ ...plaintextSecrets(), "card number": CARD.number, "card holder": CARD.name })) expect(logs.includes(value), what).toBe(false);
  });

  test("exports hold none of them: event replays, trajectories, lists, envelopes, question records", async () => {
    const exported: unknown[] = [];
    for (const r of responseIds) {
      const sse = readSse(await app.api(`/v1/responses/${r.id}/events?sessionId=${r.sessionId}`, { key: alice.apiKey }));
      await sse.done;
      exported.push(sse.raw());
      exported.push(await (await app.api(`/v1/responses/${r.id}?sessionId=${r.sessionId}`, { key: alice.apiKey })).json());
      exported.push((await trpcGet(app, { key: operator.apiKey }, "responses.get", { responseId: r.id })).body);
      exported.push((await trpcGet(app, { key: operator.apiKey }, "responses.sessionUsage", { sessionId: r.sessionId })).body);
    }
    exported.push((await trpcGet(app, { key: operator.apiKey }, "responses.list")).body);
    exported.push((await trpcGet(app, { key: operator.apiKey }, "approvals.list", { status: "decided" })).body);
    exported.push((await trpcGet(app, { key: operator.apiKey }, "question.list", { status: "all" })).body);
    exported.push(await gateway(operator.apiKey, "question.list", {}));
    const text = allStrings(exported).join("\n");
    expect(text.length).toBeGreaterThan(1000);
    for (const [what, value] of Object.entries({ ...plaintextSecrets(), "card number": CARD.number, "card holder": CARD.name })) expect(text.includes(value), what).toBe(false);
    expect(text).toContain("stored");
  });
});
