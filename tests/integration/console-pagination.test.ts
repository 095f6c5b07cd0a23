import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { type TCaller, trpcGet, trpcPost } from "./security-helpers";

/**
 * The console's keyset-paginated lists that used to answer in one page: questions, standing
 * grants, users, API keys and devices. Every row is made through the public surface (/v1, the
 * gateway, tRPC); each list is walked page by page with its `nextCursor` and must give every row
 * the caller may read exactly once, newest first, and nothing of anyone else's (the read scope).
 */
type TPageBody<T> = { rows: T[]; nextCursor: string | null };

let app: TTestApp;
let admin: TTestUser;
let operator: TTestUser;
let owner: TTestUser;
let other: TTestUser;
let auditor: TTestUser;
const as = (u: TTestUser): TCaller => ({ key: u.apiKey });

const QUESTIONS = [{ questionId: "pick", header: "Pick", question: "Which?", options: [{ label: "a" }, { label: "b" }] }];

async function data<T>(res: Promise<{ status: number; body: Record<string, unknown> }>): Promise<T> {
  const { status, body } = await res;
  expect(status, JSON.stringify(body)).toBe(200);
  return (body as { result: { data: T } }).result.data;
}

/** Every page of a list, following `nextCursor` until it is null; returns the pages. */
async function walk<T extends { id: string }>(caller: TCaller, path: string, input: Record<string, unknown>): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const page: TPageBody<T> = await data(trpcGet(app, caller, path, { ...input, ...(cursor ? { cursor } : {}) }));
    pages.push(page.rows);
    if (!page.nextCursor) return pages;
    cursor = page.nextCursor;
  }
  throw new Error(`${path} did not end`);
}

const ids = <T extends { id: string }>(pages: T[][]): string[] => pages.flat().map((r) => r.id);

async function askQuestion(u: TTestUser): Promise<string> {
  const res = await app.api("/v1/gateway/question.request", { key: u.apiKey, body: { questions: QUESTIONS, timeoutMs: 600_000 } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { payload: { id: string } }).payload.id;
}

/** A standing grant for `u`'s run: an operator approves its exec with a session grant. */
async function grantFor(u: TTestUser): Promise<string> {
  const env = (await (await app.api("/v1/responses", { key: u.apiKey, body: { input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: "true" } }] }, { text: "done" }] } } })).json()) as {
    requiredAction: { id: string };
  };
  const res = await app.api(`/v1/approvals/${env.requiredAction.id}`, { key: operator.apiKey, body: { decision: "approve", grant: "session" } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { grantId: string }).grantId;
}

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.user("admin");
  operator = await app.user("operator");
  owner = await app.user("member");
  other = await app.user("member");
  auditor = await app.user("auditor");
}, 60_000);

afterAll(async () => {
  await app?.close();
});

describe(`console pagination (${testDbKind()})`, () => {
  it("questions: pages of pending and settled, newest first, each only once, within the read scope", async () => {
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) mine.push(await askQuestion(owner));
    const others = [await askQuestion(other), await askQuestion(other)];

    const ownerPages = await walk<{ id: string; status: string }>(as(owner), "question.page", { status: "pending", limit: 2 });
    expect(ownerPages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(ids(ownerPages)).toEqual([...mine].reverse());

    // Another member reads only its own; an operator and an auditor read the workspace.
    expect(ids(await walk(as(other), "question.page", { status: "pending", limit: 2 }))).toEqual([...others].reverse());
    for (const reader of [operator, auditor]) {
      const seen = ids(await walk(as(reader), "question.page", { status: "pending", limit: 3 }));
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expect.arrayContaining([...mine, ...others]));
    }

    // Answering one moves it from the pending pages to the settled ones.
    const answered = mine[2] as string;
    expect((await trpcPost(app, as(owner), "question.resolve", { id: answered, answers: { pick: ["a"] } })).status).toBe(200);
    const pendingNow = ids(await walk(as(owner), "question.page", { status: "pending", limit: 2 }));
    expect(pendingNow).not.toContain(answered);
    expect(pendingNow).toHaveLength(4);
    const settled = (await walk<{ id: string; status: string }>(as(owner), "question.page", { status: "settled", limit: 2 })).flat();
    expect(settled.map((q) => [q.id, q.status])).toEqual([[answered, "answered"]]);
    expect(ids(await walk(as(other), "question.page", { status: "settled", limit: 2 }))).toEqual([]);
    expect(ids(await walk(as(owner), "question.page", { status: "all", limit: 4 }))).toEqual([...mine].reverse());
  });

  it("grants: active and all, paged, only the caller's own for a member; revoked ones leave the active pages", async () => {
    const mine = [await grantFor(owner), await grantFor(owner), await grantFor(owner)];
    const theirs = await grantFor(other);
    const ownerPages = await walk<{ id: string; userId: string }>(as(owner), "grants.page", { status: "active", limit: 2 });
    expect(ownerPages.map((p) => p.length)).toEqual([2, 1]);
    expect(ids(ownerPages)).toEqual([...mine].reverse());
    expect(ids(await walk(as(other), "grants.page", { status: "active", limit: 2 }))).toEqual([theirs]);
    expect(ids(await walk(as(auditor), "grants.page", { status: "all", limit: 1 }))).toEqual([theirs, ...[...mine].reverse()]);

    expect((await trpcPost(app, as(owner), "grants.revoke", { grantId: mine[1] })).status).toBe(200);
    expect(ids(await walk(as(owner), "grants.page", { status: "active", limit: 2 }))).toEqual([mine[2], mine[0]]);
    const all = (await walk<{ id: string; status: string }>(as(owner), "grants.page", { status: "all", limit: 2 })).flat();
    expect(all.map((g) => [g.id, g.status])).toEqual([
      [mine[2], "active"],
      [mine[1], "revoked"],
      [mine[0], "active"],
    ]);
  });

  it("users: every user once across pages, newest first, with the same facts as the whole list; members are refused", async () => {
    const added = [await app.user("member"), await app.user("member"), await app.user("operator")];
    const pages = await walk<{ id: string; name: string; role: string; status: string; activeKeys: number; createdAt: string }>(as(admin), "admin.usersPage", { limit: 2 });
    expect(pages.every((p) => p.length <= 2)).toBe(true);
    const rows = pages.flat();
    expect(new Set(rows.map((u) => u.id)).size).toBe(rows.length);
    expect(rows.slice(0, 3).map((u) => u.id)).toEqual(added.map((u) => u.userId).reverse());
    const times = rows.map((u) => Date.parse(u.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const whole = await data<Array<{ id: string }>>(trpcGet(app, as(admin), "admin.users"));
    expect(rows).toEqual(expect.arrayContaining(whole.map((u) => expect.objectContaining({ id: u.id }))));
    expect(rows).toHaveLength(whole.length);
    expect(ids(await walk(as(auditor), "admin.usersPage", { limit: 3 }))).toEqual(rows.map((u) => u.id));
    expect((await trpcGet(app, as(owner), "admin.usersPage", { limit: 2 })).status).toBe(403);
  });

  it("API keys: a member pages through its own keys only, an admin through everyone's", async () => {
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      created.push((await data<{ id: string }>(trpcPost(app, as(owner), "admin.createApiKey", { name: `page key ${i}` }))).id);
    }
    const mine = (await walk<{ id: string; userId: string }>(as(owner), "admin.apiKeysPage", { limit: 2 })).flat();
    expect(mine.every((k) => k.userId === owner.userId)).toBe(true);
    expect(mine.slice(0, 3).map((k) => k.id)).toEqual([...created].reverse());
    expect(mine).toHaveLength(4); // the three above and the key it was made with
    const everyone = ids(await walk(as(admin), "admin.apiKeysPage", { limit: 3 }));
    expect(new Set(everyone).size).toBe(everyone.length);
    expect(everyone).toEqual(expect.arrayContaining(mine.map((k) => k.id)));
    const owners = new Set((await walk<{ id: string; userId: string }>(as(admin), "admin.apiKeysPage", { limit: 50 })).flat().map((k) => k.userId));
    expect(owners.has(other.userId)).toBe(true);
  });

  it("devices: paged newest first for workspace readers; members are refused", async () => {
    const created: string[] = [];
    for (let i = 0; i < 3; i++) created.push((await data<{ deviceId: string }>(trpcPost(app, as(admin), "devices.createPairing", { name: `paged-${i}` }))).deviceId);
    const pages = await walk<{ id: string; status: string }>(as(operator), "devices.page", { limit: 2 });
    expect(pages.map((p) => p.length)).toEqual([2, 1]);
    expect(ids(pages)).toEqual([...created].reverse());
    expect((await trpcGet(app, as(owner), "devices.page", { limit: 2 })).status).toBe(403);
  });

  it("bad page input is a 400 with a sentence; a cursor the server did not make starts at the first page", async () => {
    for (const input of [{ limit: 0 }, { limit: 201 }, { limit: 2, extra: true }, { cursor: "x".repeat(401) }]) {
      const res = await trpcGet(app, as(admin), "admin.usersPage", input);
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/"message":"[^"]{8,}/);
    }
    const first = await data<TPageBody<{ id: string }>>(trpcGet(app, as(admin), "admin.usersPage", { limit: 2 }));
    const forged = await data<TPageBody<{ id: string }>>(trpcGet(app, as(admin), "admin.usersPage", { limit: 2, cursor: "bm90LWEtY3Vyc29y" }));
    expect(forged.rows.map((r) => r.id)).toEqual(first.rows.map((r) => r.id));
    expect((await trpcGet(app, as(owner), "grants.page", { status: "expired" })).status).toBe(400);
    expect((await trpcGet(app, as(owner), "question.page", { status: "answered" })).status).toBe(400);
  });
});
