import { type Browser, expect, type Page, test } from "@playwright/test";
import { addUser, demoCredentials, SIGNED_OUT, signIn, startEchoRun, startQuestionRun, uniqueMarker } from "./support";

/**
 * Console page titles (and the server's first render: <html lang>, the page before any script)
 * follow the console user's language setting, not the browser's; the answer page keeps the
 * browser's language whatever the setting.
 */
async function browserIn(browser: Browser, baseURL: string | undefined, locale: string): Promise<Page> {
  const context = await browser.newContext({ locale, baseURL, storageState: SIGNED_OUT, viewport: { width: 1280, height: 860 } });
  return context.newPage();
}

/** The HTML the server sends for `path` with the page's cookies and `Accept-Language` (no script runs). */
async function serverHtml(page: Page, path: string, acceptLanguage: string): Promise<string> {
  const res = await page.request.get(path, { headers: { "accept-language": acceptLanguage } });
  expect(res.status()).toBe(200);
  return res.text();
}

test("an English browser with the console set to 简体中文 gets Chinese titles on every console page, from the server, after navigation and after a reload", async ({ browser, baseURL, request }) => {
  test.setTimeout(240_000);
  const creds = await demoCredentials();
  const user = addUser(`Titles ${Date.now().toString(36)}`, "operator");
  const page = await browserIn(browser, baseURL, "en-US");
  await signIn(page, user);
  await expect(page).toHaveTitle("Waiting · Countersign");

  // Choosing the language re-renders the title of the page one is on.
  await page.getByTestId("console-language").selectOption("zh-CN");
  await expect(page).toHaveTitle("等待中 · Countersign");

  const pages: Array<[string, string]> = [
    ["/approvals", "审批 · Countersign"],
    ["/questions", "问题 · Countersign"],
    ["/responses", "响应 · Countersign"],
    ["/sessions", "会话 · Countersign"],
    ["/grants", "授权 · Countersign"],
    ["/usage", "用量 · Countersign"],
    ["/analytics", "分析 · Countersign"],
    ["/policy", "策略 · Countersign"],
    ["/notifications", "通知 · Countersign"],
    ["/admin", "管理 · Countersign"],
  ];
  for (const [path, title] of pages) {
    await page.goto(path);
    await expect(page, path).toHaveTitle(title);
    await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
    // The server rendered it so: the title is in the HTML before any script runs, whatever Accept-Language says.
    const html = await serverHtml(page, path, "en-US,en;q=0.9");
    expect(html, path).toContain(`<title>${title}</title>`);
    expect(html).toContain('<html lang="zh-CN"');
  }

  // A response's own page, and a client-side navigation through the menu.
  const run = await startEchoRun(request, creds.apiKey, uniqueMarker());
  await page.goto(`/responses/${run.responseId}`);
  await expect(page).toHaveTitle(`响应 ${run.responseId} · Countersign`);
  await page.getByRole("navigation").first().getByRole("link", { name: "审批" }).click();
  await expect(page).toHaveURL(/\/approvals$/);
  await expect(page).toHaveTitle("审批 · Countersign");
  await page.reload();
  await expect(page).toHaveTitle("审批 · Countersign");

  // The answer page follows the browser (English here), not the console setting.
  const question = await startQuestionRun(request, creds.apiKey, {
    name: "ask_user",
    arguments: { questions: [{ id: "env", header: "Env", question: "Which environment?", options: [{ label: "staging" }, { label: "prod" }] }] },
  });
  await page.goto(`/answer/${question.questionId}`);
  await expect(page).toHaveTitle("Answer a question · Countersign");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expect(page.getByRole("heading", { level: 1, name: "A question for you" })).toBeVisible();
  expect(await serverHtml(page, `/answer/${question.questionId}`, "en-US")).toContain("<title>Answer a question · Countersign</title>");
  expect(await serverHtml(page, `/answer/${question.questionId}`, "zh-CN")).toContain("<title>回答问题 · Countersign</title>");

  // Back to "Browser language": English titles again, at once and after a reload.
  await page.goto("/admin");
  await page.getByTestId("console-language").selectOption("");
  await expect(page).toHaveTitle("Admin · Countersign");
  await page.reload();
  await expect(page).toHaveTitle("Admin · Countersign");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await page.context().close();
});

test("a Chinese browser with the console set to English gets English titles; a header sent by the client cannot choose the language", async ({ browser, baseURL }) => {
  test.setTimeout(180_000);
  const user = addUser(`Titles en ${Date.now().toString(36)}`, "member");
  const page = await browserIn(browser, baseURL, "zh-CN");
  // The login page follows the (Chinese) browser.
  await page.goto("/login");
  await expect(page).toHaveTitle("登录 · Countersign");
  await page.getByLabel("邮箱").fill(user.email);
  await page.getByLabel("密码").fill(user.password);
  await page.getByRole("button", { name: "登录" }).click();
  await expect(page).toHaveTitle("等待中 · Countersign");
  await page.getByTestId("console-language").selectOption("en");
  await expect(page).toHaveTitle("Waiting · Countersign");
  await page.goto("/responses");
  await expect(page).toHaveTitle("Responses · Countersign");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  expect(await serverHtml(page, "/grants", "zh-CN")).toContain("<title>Grants · Countersign</title>");
  const signedOut = await browserIn(browser, baseURL, "zh-CN");
  await signedOut.goto("/login");
  // The host's own header is dropped when a client sends it: without a session the browser decides.
  const res = await signedOut.request.get("/login", { headers: { "accept-language": "zh-CN", "x-countersign-console-locale": "en" } });
  expect(await res.text()).toContain("<title>登录 · Countersign</title>");
  const anon = await signedOut.request.get("/approvals", { headers: { "accept-language": "zh-CN", "x-countersign-console-locale": "en" } });
  expect(await anon.text()).toContain("<title>审批 · Countersign</title>");
  await signedOut.context().close();
  await page.context().close();
});
