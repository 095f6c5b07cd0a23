import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDbKind } from "../../db/testing";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { expectError, invoke, type TBody, workspaceOf } from "./helpers";

/**
 * The inbox and the answer page show a run's files. `inbox.files` lists an approval's run files
 * (served by `/v1`) to those who may read the run. The answer page shows the files of the run that asks: `/api/answer/{questionId}/files/{id}`
 * serves them to the page's reader (signed in, or holding that question's answer link), only that
 * run's files, like every stored file (its type, nosniff, only raster images inline).
 */

/** A 1×1 PNG, and a 4×4 one (other bytes: another blob). */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const OTHER_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==";
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';

let app: TTestApp;
let alice: TTestUser;
let bob: TTestUser;
let auditor: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  [alice, bob, auditor] = await Promise.all([app.user("member", "Alice"), app.user("member", "Bob"), app.user("auditor", "Audrey")]);
}, 120_000);
afterAll(async () => {
  await app?.close();
});

const ask = { name: "ask_user", arguments: { questions: [{ id: "ok", header: "Chart", question: "Is the chart right?", options: [{ label: "yes" }, { label: "no" }] }] } };

type TFile = { id: string; name: string; mediaType: string; size: number; url: string; origin: string };

describe(`run files in the inbox and on the answer page (${testDbKind()})`, () => {
  const linkCookie = async (questionId: string, key: string): Promise<string> => {
    const res = await fetch(`${app.url}/answer/${questionId}?access_token=${encodeURIComponent(key)}`, { redirect: "manual" });
    expect(res.status).toBe(303);
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toContain("; Path=/api;");
    return setCookie.split(";")[0] ?? "";
  };
  const contextOf = async (questionId: string, cookie: string) => {
    const res = await fetch(`${app.url}/api/trpc/question.context?input=${encodeURIComponent(JSON.stringify({ id: questionId }))}`, { headers: { cookie } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { result: { data: { responseId: string | null; files: TFile[] } } }).result.data;
  };
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${app.url}${path}`, { headers });

  /** A run of Alice's that was given a PNG, attached an SVG from its workspace, and asks a question. */
  async function askingRun(): Promise<{ env: TBody; questionId: string }> {
    const first = await invoke(app, alice.apiKey, "hello");
    writeFileSync(join(workspaceOf(app, first.sessionId), "page.svg"), SVG);
    const env = await invoke(app, alice.apiKey, { script: [{ text: "Here is the chart.", replyAttachments: ["page.svg"], toolCalls: [ask] }, { text: "Thanks." }] }, {
      sessionId: first.sessionId,
      attachments: [{ name: "chart.png", mediaType: "image/png", data: PNG }],
    });
    expect(env.status).toBe("requires_action");
    const action = env.requiredAction as { type: string; id: string };
    expect(action.type).toBe("question");
    return { env, questionId: action.id };
  }

  test("the answer link's holder sees the run's files; raster images inline, SVG only as a download", async () => {
    const { questionId } = await askingRun();
    const cookie = await linkCookie(questionId, alice.apiKey);
    const { files } = await contextOf(questionId, cookie);
    expect(files.map((f) => [f.name, f.mediaType, f.origin])).toEqual([
      ["chart.png", "image/png", "given"],
      ["page.svg", "image/svg+xml", "reply"],
    ]);
    const [png, svg] = files as [TFile, TFile];
    expect(png.url).toBe(`/api/answer/${questionId}/files/${png.id}`);

    const image = await get(png.url, { cookie });
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("content-disposition")).toMatch(/^inline;/);
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
    expect(image.headers.get("cache-control")).toBe("private, no-store");
    expect(Buffer.from(await image.arrayBuffer()).toString("base64")).toBe(PNG);

    const page = await get(svg.url, { cookie });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("image/svg+xml");
    expect(page.headers.get("content-disposition")).toBe(`attachment; filename="page.svg"; filename*=UTF-8''page.svg`);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(await page.text()).toBe(SVG);

    // Signed-in readers of the run get the same files: its owner, an auditor.
    for (const reader of [alice, auditor]) expect((await get(png.url, { authorization: `Bearer ${reader.apiKey}` })).status).toBe(200);
  });

  test("nothing else: another run's media is a 404, another question's path needs its own link, strangers get nothing", async () => {
    const { questionId } = await askingRun();
    const cookie = await linkCookie(questionId, alice.apiKey);
    // Alice's own media of another run (she may read it on that run) is not this question's file.
    const other = await invoke(app, alice.apiKey, { script: [{ text: "Another.", replyAttachments: ["attachments/other.png"] }] }, { attachments: [{ name: "other.png", mediaType: "image/png", data: OTHER_PNG }] });
    const otherFile = other.output.find((i) => i.type === "attachment") as { id: string; url: string };
    expect((await get(otherFile.url, { authorization: `Bearer ${alice.apiKey}` })).status).toBe(200);
    await expectError(await get(`/api/answer/${questionId}/files/${otherFile.id}`, { cookie }), 404, "not_found");
    await expectError(await get(`/api/answer/${questionId}/files/${otherFile.id}`, { authorization: `Bearer ${alice.apiKey}` }), 404, "not_found");
    await expectError(await get(`/api/answer/${questionId}/files/media_unknown`, { cookie }), 404, "not_found");

    const { files, responseId } = await contextOf(questionId, cookie);
    const png = files[0] as TFile;
    // The cookie opens its own question only: the same file under another question's path is refused.
    const second = await askingRun();
    await expectError(await get(`/api/answer/${second.questionId}/files/${png.id}`, { cookie }), 401, "unauthenticated");
    // No credential, a forged cookie, another member (the question looks missing), a cookie's write.
    await expectError(await get(png.url), 401, "unauthenticated");
    const [name] = cookie.split("=");
    await expectError(await get(png.url, { cookie: `${name}=key_0.9999999999999.AAAA` }), 401, "unauthenticated");
    await expectError(await get(png.url, { authorization: `Bearer ${bob.apiKey}` }), 404, "not_found");
    await expectError(await fetch(`${app.url}${png.url}`, { method: "POST", headers: { cookie, origin: app.url } }), 405, "method_not_allowed");
    // The cookie still opens no /v1 route.
    await expectError(await get(`/v1/responses/${responseId}/attachments/${png.id}`, { cookie }), 401, "unauthenticated");
  });

  test("the inbox lists an approval's run files, served by /v1, to those who may read the run only", async () => {
    const env = await invoke(app, alice.apiKey, { script: [{ text: "Checking.", toolCalls: [{ name: "exec", arguments: { command: "ls attachments" } }] }, { text: "Done." }] }, {
      attachments: [
        { name: "chart.png", mediaType: "image/png", data: PNG },
        { name: "notes.txt", mediaType: "text/plain", data: Buffer.from("notes\n").toString("base64") },
      ],
    });
    expect(env.status).toBe("requires_action");
    const approvalId = (env.requiredAction as { id: string }).id;
    let imageUrl = "";
    const filesOf = (key: string) => get(`/api/trpc/inbox.files?input=${encodeURIComponent(JSON.stringify({ approvalId }))}`, { authorization: `Bearer ${key}` });
    for (const reader of [alice, auditor]) {
      const res = await filesOf(reader.apiKey);
      expect(res.status).toBe(200);
      const files = ((await res.json()) as { result: { data: TFile[] } }).result.data;
      expect(files.map((f) => [f.name, f.mediaType, f.size, f.origin])).toEqual([
        ["chart.png", "image/png", Buffer.from(PNG, "base64").length, "given"],
        ["notes.txt", "text/plain", 6, "given"],
      ]);
      const [png, notes] = files as [TFile, TFile];
      expect(png.url).toBe(`/v1/responses/${env.id}/attachments/${png.id}`);
      imageUrl = png.url;
      const image = await get(png.url, { authorization: `Bearer ${reader.apiKey}` });
      expect(image.headers.get("content-disposition")).toMatch(/^inline;/);
      expect(Buffer.from(await image.arrayBuffer()).toString("base64")).toBe(PNG);
      expect(await (await get(notes.url, { authorization: `Bearer ${reader.apiKey}` })).text()).toBe("notes\n");
    }
    // Another member: the approval looks missing, and so does the file.
    expect((await filesOf(bob.apiKey)).status).toBe(404);
    await expectError(await get(imageUrl, { authorization: `Bearer ${bob.apiKey}` }), 404, "not_found");
  });
});
