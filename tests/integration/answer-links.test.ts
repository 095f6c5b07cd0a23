import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { gwOk, pick } from "./questions-helpers";

/**
 * No long-lived key in a URL: `/answer/{id}?access_token=<key>` is exchanged once for a cookie
 * that reads and answers that one question, and the key is never sent back, stored or logged.
 */
let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, bob] = await Promise.all([app.user("member", "Alice"), app.user("member", "Bob")]);
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe(`answer links (${testDbKind()})`, () => {
  const cookieOf = (res: Response): string => (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const open = (id: string, key: string, query = "") => fetch(`${app.url}/answer/${id}?access_token=${encodeURIComponent(key)}${query}`, { redirect: "manual" });
  const withCookie = (cookie: string, path: string, input: unknown, method: "GET" | "POST" = "GET", headers: Record<string, string> = {}) =>
    method === "GET"
      ? fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { cookie, ...headers } })
      : fetch(`${app.url}/api/trpc/${path}`, { method, headers: { cookie, "content-type": "application/json", origin: app.url, ...headers }, body: JSON.stringify(input) });

  test("the key is exchanged once for a cookie of that question only, and is never logged", async () => {
    const { id } = await gwOk<{ id: string }>(app, alice.apiKey, "question.request", { questions: [pick()] });
    const { id: other } = await gwOk<{ id: string }>(app, alice.apiKey, "question.request", { questions: [pick()] });

    // A key that does not work: back to the page without it, no cookie.
    const refused = await open(id, "cs_not-a-real-key");
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toBe(`/answer/${id}?link=invalid`);
    expect(refused.headers.get("set-cookie")).toBeNull();

    const res = await open(id, alice.apiKey, "&utm=mail");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/answer/${id}?utm=mail`);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^cs_answer_[0-9a-f]{24}=key_[0-9a-f]+\.\d+\.[A-Za-z0-9_-]{43}; Path=\/api; Max-Age=900; HttpOnly; SameSite=Strict$/);
    expect(setCookie).not.toContain(alice.apiKey);
    const cookie = cookieOf(res);

    // The question reads and answers with it, as Alice.
    const viewer = (await (await withCookie(cookie, "question.viewer", { id })).json()) as { result: { data: Record<string, unknown> } };
    expect(viewer.result.data).toEqual({ userId: alice.userId, name: "Alice", email: alice.email, role: "member", viaLink: true });
    expect((await withCookie(cookie, "question.get", { id })).status).toBe(200);

    // Nothing else: another question, the console, the API, a cross-site answer, a forged cookie.
    expect((await withCookie(cookie, "question.get", { id: other })).status).toBe(401);
    expect((await withCookie(cookie, "me", undefined)).status).toBe(401);
    expect((await withCookie(cookie, "question.list", {})).status).toBe(401);
    expect((await withCookie(cookie, "users.names", { ids: [alice.userId] })).status).toBe(401);
    expect((await fetch(`${app.url}/v1/gateway/question.get`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify({ id }) })).status).toBe(401);
    expect((await withCookie(cookie, "question.resolve", { id, answers: { color: ["blue"] } }, "POST", { origin: "https://evil.example" })).status).toBe(403);
    const [name, value = ""] = cookie.split("=");
    const forged = `${name}=${value.replace(/\.\d+\./, (m) => `.${Number(m.slice(1, -1)) + 3_600_000}.`)}`;
    expect((await withCookie(forged, "question.get", { id })).status).toBe(401);
    expect((await withCookie(`${name}=${value.slice(0, -2)}AA`, "question.get", { id })).status).toBe(401);
    expect(await gwOk<{ question: { status: string } }>(app, alice.apiKey, "question.get", { id })).toMatchObject({ question: { status: "pending" } });

    const answered = await withCookie(cookie, "question.resolve", { id, answers: { color: ["blue"] } }, "POST");
    expect(answered.status, await answered.clone().text()).toBe(200);
    expect(await gwOk<{ question: { status: string; answeredBy: { userId: string } } }>(app, alice.apiKey, "question.get", { id })).toMatchObject({
      question: { status: "answered", answeredBy: { userId: alice.userId } },
    });
    expect(app.logs()).not.toContain(alice.apiKey);
  });

  test("another user's question or an unknown one opens nothing more with a link than without", async () => {
    const { id } = await gwOk<{ id: string }>(app, alice.apiKey, "question.request", { questions: [pick()] });
    const cookie = cookieOf(await open(id, bob.apiKey));
    const body = async (res: Response) => (await res.text()).replaceAll(id, "<id>");
    const unknown = `ask_${"0".repeat(32)}`;
    const unknownCookie = cookieOf(await open(unknown, bob.apiKey));
    const ofForeign = await withCookie(cookie, "question.get", { id });
    const ofUnknown = await withCookie(unknownCookie, "question.get", { id: unknown });
    expect(ofForeign.status).toBe(404);
    expect(await body(ofForeign)).toBe((await ofUnknown.text()).replaceAll(unknown, "<id>"));
  });
});
