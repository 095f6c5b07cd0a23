import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { API_KEY_CACHE_MS } from "../../server/auth/api-key-cache";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { trpcGet, trpcPost } from "./security-helpers";

/**
 * Point 7 of issue 15 through tRPC (the console's Admin page): a user's active-key count leaves
 * revoked keys out, and a key's "last used" is the time it last authenticated, written at most
 * once a minute (later uses within the minute do not move it).
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

type TKeyRow = { id: string; userId: string; name: string; lastUsedAt: string | null; revokedAt: string | null };
const asAdmin = () => ({ key: admin.apiKey });
const data = <T>(body: Record<string, unknown>): T => (body as { result: { data: T } }).result.data;
const keysOf = async (userId: string): Promise<TKeyRow[]> => data<TKeyRow[]>((await trpcGet(app, asAdmin(), "admin.apiKeys")).body).filter((k) => k.userId === userId);
const activeKeys = async (userId: string): Promise<number | undefined> =>
  data<Array<{ id: string; activeKeys: number }>>((await trpcGet(app, asAdmin(), "admin.users")).body).find((u) => u.id === userId)?.activeKeys;
const use = async (key: string) => expect((await app.api("/v1/grants", { key })).status).toBe(200);

describe(`the Admin page's key facts (${testDbKind()})`, () => {
  it("counts only unrevoked keys", async () => {
    const member = await app.user("member");
    expect(await activeKeys(member.userId)).toBe(1);
    const created = await trpcPost(app, asAdmin(), "admin.createApiKey", { name: "second", userId: member.userId });
    expect(created.status).toBe(200);
    const second = data<{ id: string }>(created.body);
    expect(await activeKeys(member.userId)).toBe(2);
    expect((await trpcPost(app, asAdmin(), "admin.revokeApiKey", { keyId: second.id })).status).toBe(200);
    expect(await activeKeys(member.userId)).toBe(1);
    expect((await keysOf(member.userId)).filter((k) => k.revokedAt !== null).map((k) => k.id)).toEqual([second.id]);
  });

  it("shows when a key last authenticated, recorded at most once a minute", async () => {
    const member = await app.user("member");
    const created = await trpcPost(app, asAdmin(), "admin.createApiKey", { name: "unused", userId: member.userId });
    const unused = data<{ id: string }>(created.body);
    const before = Date.now();
    await use(member.apiKey);
    const after = Date.now();
    const rows = await keysOf(member.userId);
    const used = rows.find((k) => k.id !== unused.id);
    expect(rows.find((k) => k.id === unused.id)?.lastUsedAt).toBeNull();
    const first = Date.parse(used?.lastUsedAt ?? "");
    expect(first).toBeGreaterThanOrEqual(before);
    expect(first).toBeLessThanOrEqual(after);
    // Past the lookup cache, the key is looked up again: within the minute, the time stays.
    await new Promise((resolve) => setTimeout(resolve, API_KEY_CACHE_MS + 300));
    await use(member.apiKey);
    expect((await keysOf(member.userId)).find((k) => k.id === used?.id)?.lastUsedAt).toBe(used?.lastUsedAt);
  });
});
