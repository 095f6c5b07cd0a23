import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";

let app: TTestApp;
let ada: TTestUser;
let bo: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  ada = await app.user("operator", "Ada settings");
  bo = await app.user("member", "Bo settings");
});
afterAll(async () => {
  await app?.close();
});

async function getSettings(user: TTestUser): Promise<unknown> {
  const res = await fetch(`${app.url}/api/trpc/settings.get`, { headers: { authorization: `Bearer ${user.apiKey}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { data: unknown } }).result.data;
}

function setLocale(user: TTestUser, locale: unknown): Promise<Response> {
  return fetch(`${app.url}/api/trpc/settings.setLocale`, {
    method: "POST",
    headers: { authorization: `Bearer ${user.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ locale }),
  });
}

describe(`console language setting (${testDbKind()})`, () => {
  it("is each user's own, kept on the server, and null follows the browser again", async () => {
    expect(await getSettings(ada)).toEqual({ locale: null });
    expect((await setLocale(ada, "zh-CN")).status).toBe(200);
    expect(await getSettings(ada)).toEqual({ locale: "zh-CN" });
    expect(await getSettings(bo)).toEqual({ locale: null });

    expect((await setLocale(ada, "en")).status).toBe(200);
    expect(await getSettings(ada)).toEqual({ locale: "en" });
    expect((await setLocale(ada, null)).status).toBe(200);
    expect(await getSettings(ada)).toEqual({ locale: null });
  });

  it("refuses a language the console does not have, and changes nothing", async () => {
    expect((await setLocale(bo, "zh-CN")).status).toBe(200);
    for (const bad of ["fr", "zh-TW", "", 7]) expect((await setLocale(bo, bad)).status, String(bad)).toBe(400);
    expect(await getSettings(bo)).toEqual({ locale: "zh-CN" });
  });

  it("needs a signed-in user", async () => {
    expect((await fetch(`${app.url}/api/trpc/settings.get`)).status).toBe(401);
  });
});
